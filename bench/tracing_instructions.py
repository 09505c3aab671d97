"""What tracing costs a unary request, counted in instructions rather than timed.

Timing the traced and untraced server side by side (``vs_go.py``, ``tracing.py``) moves
by ±5 % from run to run on a shared machine, as much as the cost being measured. Here
each server (``trpc-bridge serve --agent trpc_bridge.agents.scenarios:text``, as users
start it) runs under valgrind's callgrind, which counts the instructions the process
executes (every thread) while switched on: after a warm-up, for ``REQUESTS`` sequential
A2A 0.3 ``message/send`` calls with a ``traceparent``. Traced, the server exports OTLP/HTTP
to a sink in this process, its batch processor set so that exactly one full 512-span
batch is encoded and sent inside the window (the export's cost, amortised as in a busy
server). Printed: instructions per request untraced and traced, and the ratio.

Needs valgrind (``callgrind``, ``callgrind_control``); skipped without it.
Run: ``make bench`` or ``.venv/bin/python bench/tracing_instructions.py``.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "interop"))
from _rawhttp import OtlpSink, exchange, request_bytes
from peers import TRPC_BRIDGE, running
from vs_go import TRACEPARENT, body

WARM_UP, REQUESTS = 50, 520


def _instructions(out: Path) -> int:
    """The instructions of the window: the largest ``totals:`` of callgrind's dumps (the
    one ``callgrind_control -d`` asked for; the dump at exit counts nothing more, the
    instrumentation being off by then)."""
    totals = [
        int(line.split()[1])
        for dump in out.parent.glob(out.name + "*")
        for line in dump.read_text().splitlines()
        if line.startswith("totals:")
    ]
    if not totals or max(totals) == 0:
        raise RuntimeError(f"no callgrind totals in {out}*")
    return max(totals)


async def per_request(traced: bool, sink: OtlpSink, work: Path) -> tuple[float, int]:
    """Instructions per request, and the OTLP exports that happened in the window."""
    out = work / ("traced.out" if traced else "untraced.out")
    env = (
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": sink.endpoint,
            # No timed flush inside the window: the queue's 512th span starts the export.
            "OTEL_BSP_SCHEDULE_DELAY": "600000",
        }
        if traced
        else {}
    )
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
    cmd += [sys.executable, str(TRPC_BRIDGE), "serve", "--host", "127.0.0.1", "--port", "0"]
    cmd += ["--grpc-port", "-1", "--agent", "trpc_bridge.agents.scenarios:text", "--no-trace-view"]
    headers = {"traceparent": TRACEPARENT}
    with running(cmd, env) as server:
        pid = str(server.proc.pid)
        for index in range(WARM_UP):
            await exchange(server.url, request_bytes(server.url, body("message/send", index)))
        subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
        exports = sink.exports
        for index in range(REQUESTS):
            request = request_bytes(server.url, body("message/send", index), headers)
            await exchange(server.url, request)
        await asyncio.sleep(8)  # the export thread finishes the batch (slow under valgrind)
        subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)
        subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
        exports = sink.exports - exports
    return _instructions(out) / REQUESTS, exports


async def main() -> None:
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("skipped: valgrind (callgrind) is not on PATH")
        return
    with tempfile.TemporaryDirectory() as work:
        async with OtlpSink() as sink:
            untraced, _ = await per_request(False, sink, Path(work))
            traced, exported = await per_request(True, sink, Path(work))
    print(
        f"unary message/send, {REQUESTS} requests: untraced {untraced / 1e6:.3f} M "
        f"instructions per request, traced {traced / 1e6:.3f} M: traced/untraced "
        f"{traced / untraced:.3f} (+{(traced / untraced - 1) * 100:.1f} %; "
        f"{exported} OTLP export(s) in the window)"
    )


if __name__ == "__main__":
    asyncio.run(main())
