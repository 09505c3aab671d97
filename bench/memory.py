"""Is the server's memory flat in stream length? Peak RSS at 100k deltas against 10k.

For each length, a fresh ``trpc-bridge serve --agent trpc_bridge.agents.scenarios:S``
process (``long10k``, ``long100k``: the ``long`` scenario's tool step, then N text
deltas and the full text) serves one ``message/stream`` over A2A 0.3 JSON-RPC, read by
``_rawhttp`` (the same client as ``vs_go.py``); the server's peak resident set
(``VmHWM`` in ``/proc/<pid>/status``) is read before and after. What a stream may keep
for its whole length is the task's text (the answer, ~7 bytes per delta here, twice:
the streamed runs and the final text); the frames themselves must not pile up.

Also printed: µs of wall time per event at each length (per-event cost flat in length).

Run: ``make bench`` or ``.venv/bin/python bench/memory.py [--rounds 3]`` (the median of
the rounds' peaks counts; each round is a fresh pair of processes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "interop"))
from _rawhttp import exchange, request_bytes
from peers import bridge_server

from trpc_bridge.codecs.trpc.keys import INTERACTION_SPEC_VERSION

LENGTHS = {10_000: "long10k", 100_000: "long100k"}


def peak_kib(pid: int) -> int:
    """The process's peak resident set so far (``VmHWM``), KiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/<pid>/status")


def stream_body() -> bytes:
    message = {
        "kind": "message",
        "messageId": "bench-1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
        "metadata": {"interaction_spec_version": INTERACTION_SPEC_VERSION},
    }
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": {"message": message}}
    return json.dumps(rpc).encode()


async def one(length: int) -> tuple[int, int, float]:
    """(peak KiB before the stream, after it, µs per event) of a fresh server."""
    with bridge_server(f"trpc_bridge.agents.scenarios:{LENGTHS[length]}") as server:
        pid = server.proc.pid
        before = peak_kib(pid)
        result = await exchange(server.url, request_bytes(server.url, stream_body(), {}))
        if b'"completed"' not in result.tail:
            raise RuntimeError(f"{length}: the stream did not complete: {result.tail[-300:]!r}")
        return before, peak_kib(pid), result.seconds / length * 1e6


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average {load} before the run; {args.rounds} rounds (fresh servers each)")
    peaks: dict[int, list[int]] = {n: [] for n in LENGTHS}
    per_event: dict[int, list[float]] = {n: [] for n in LENGTHS}
    for _ in range(args.rounds):
        for length in LENGTHS:
            before, after, micros = await one(length)
            peaks[length].append(after)
            per_event[length].append(micros)
            print(
                f"  {length:>7,} deltas: peak RSS {before / 1024:6.1f} MiB at start, "
                f"{after / 1024:6.1f} MiB after the stream; {micros:5.1f} µs/event"
            )
    small, large = LENGTHS
    peak = {n: statistics.median(p) for n, p in peaks.items()}
    micro = {n: statistics.median(p) for n, p in per_event.items()}
    growth = peak[large] / peak[small] - 1
    print(
        f"peak RSS {large // 1000}k vs {small // 1000}k: {peak[small] / 1024:.1f} -> "
        f"{peak[large] / 1024:.1f} MiB ({growth:+.1%}; target within 10 %)  "
        f"{'met' if abs(growth) <= 0.10 else 'NOT met'}"
    )
    print(
        f"per-event time {large // 1000}k/{small // 1000}k: "
        f"{micro[large] / micro[small]:.2f} (1.0 = flat)"
    )


if __name__ == "__main__":
    asyncio.run(main())
