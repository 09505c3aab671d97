"""What metrics cost: unary requests/s and streamed events/s of ``trpc-bridge serve`` with
metrics off and on, in the same run, plus the same costs counted in instructions.

Two servers of the same agent (``trpc_bridge.agents.scenarios:S``, as users start it, no
span buffer, tracing off), one without metrics and one with them on (``--metrics-port
0``: the SDK meter provider and the Prometheus reader; scraped once per round, as a
Prometheus server would every few seconds). Rounds alternate between the two servers,
so a busy machine slows both alike: printed is the median over rounds of on/off.

- unary: ``ROUNDS`` rounds of ``UNARY`` sequential A2A 0.3 ``message/send`` calls
  (``text``);
- stream: rounds of ``STREAMS`` sequential ``message/stream`` calls of the ``long``
  scenario (1,000 deltas each), rated in SSE events per second.

The rates are timed (wall clock, and per CPU second of each server: on a shared machine
the wall-clock ratio of a round moves by tens of per cent). Then, when valgrind is
installed, callgrind counts the instructions of each server for the same unary calls and
for one stream, without a scrape in the window (the deterministic figure), and those of
one scrape on its own (a cost per scrape, every few seconds, not per request).

Goal: metrics cost at most 5 % of both rates. Run:
``.venv/bin/python bench/metrics.py`` (``--quick``: fewer rounds, no callgrind).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "interop"))
from _rawhttp import exchange, request_bytes
from peers import TRPC_BRIDGE, Process, running
from vs_go import body

ROUNDS, UNARY, STREAMS = 12, 100, 3
WARM_UP = 30
CALLGRIND_REQUESTS = 200


@contextlib.contextmanager
def server(scenario: str, metrics: bool, prefix: list[str] | None = None) -> Iterator[Process]:
    cmd = [*(prefix or []), str(TRPC_BRIDGE), "serve", "--host", "127.0.0.1", "--port", "0"]
    cmd += ["--grpc-port", "-1", "--no-trace-view"]
    cmd += ["--agent", f"trpc_bridge.agents.scenarios:{scenario}"]
    if metrics:
        cmd += ["--metrics-port", "0"]
    with running(cmd) as process:
        yield process


async def _calls(process: Process, method: str, count: int, offset: int) -> tuple[float, int]:
    """``count`` sequential calls: their seconds and SSE frames."""
    started = time.perf_counter()
    frames = 0
    for index in range(count):
        done = await exchange(process.url, request_bytes(process.url, body(method, offset + index)))
        frames += done.frames
    return time.perf_counter() - started, frames


async def _scrape(process: Process) -> None:
    async with httpx.AsyncClient(timeout=60) as http:
        (await http.get(process.endpoint("metrics"))).raise_for_status()


def _cpu(process: Process) -> float:
    """The server's CPU seconds so far: its main thread's (the event loop, where requests
    are served), from ``/proc/<pid>/schedstat`` (nanoseconds; ``stat``'s ticks are 10 ms)."""
    return int(Path(f"/proc/{process.proc.pid}/schedstat").read_text().split()[0]) / 1e9


async def rates(stream: bool, rounds: int) -> tuple[float, float, float, float]:
    """Median rate off and on (per second: requests, or events for streams), the median
    on/off of the rounds' rates, and on/off of the rates per server CPU second (all
    rounds together: the figure a busy machine moves least)."""
    scenario, method, count = "text", "message/send", UNARY
    if stream:
        scenario, method, count = "long", "message/stream", STREAMS
    with server(scenario, False) as off, server(scenario, True) as on:
        for process in (off, on):
            await _calls(process, method, WARM_UP if not stream else 1, 0)
        rates_of: dict[bool, list[float]] = {False: [], True: []}
        done = {False: 0, True: 0}
        cpu = {False: 0.0, True: 0.0}
        ratios = []
        for index in range(rounds):
            offset = (index + 1) * 1000
            measured = {}
            # Alternate which server goes first: neither always meets a warmer machine.
            order = (off, on) if index % 2 == 0 else (on, off)
            for process in order:
                metrics = process is on
                before = _cpu(process)
                seconds, frames = await _calls(process, method, count, offset)
                cpu[metrics] += _cpu(process) - before
                units = frames if stream else count
                done[metrics] += units
                measured[metrics] = units / seconds
                rates_of[metrics].append(units / seconds)
                if metrics:
                    await _scrape(on)  # the collection a Prometheus server would cause
            ratios.append(measured[True] / measured[False])
    per_cpu = (done[True] / cpu[True]) / (done[False] / cpu[False])
    return (
        statistics.median(rates_of[False]),
        statistics.median(rates_of[True]),
        statistics.median(ratios),
        per_cpu,
    )


def _instructions(out: Path) -> int:
    totals = [
        int(line.split()[1])
        for dump in out.parent.glob(out.name + "*")
        for line in dump.read_text().splitlines()
        if line.startswith("totals:")
    ]
    return max(totals)


async def instructions(stream: bool, metrics: bool, work: Path) -> float:
    """Instructions per unary request, or per streamed event."""
    out = work / f"{'stream' if stream else 'unary'}-{'on' if metrics else 'off'}.out"
    prefix = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
    prefix.append(sys.executable)
    scenario, method = ("long", "message/stream") if stream else ("text", "message/send")
    with server(scenario, metrics, prefix) as process:
        pid = str(process.proc.pid)
        await _calls(process, method, 2 if stream else WARM_UP, 0)
        subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
        count = 1 if stream else CALLGRIND_REQUESTS
        _, frames = await _calls(process, method, count, 10_000)
        subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)
        subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
    return _instructions(out) / (frames if stream else count)


async def scrape_instructions(work: Path) -> float:
    """Instructions of one ``/metrics`` scrape after the unary calls (its cost is per
    scrape, every few seconds, not per request)."""
    out = work / "scrape.out"
    prefix = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
    prefix.append(sys.executable)
    with server("text", True, prefix) as process:
        pid = str(process.proc.pid)
        await _calls(process, "message/send", WARM_UP, 0)
        await _scrape(process)
        subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
        await _scrape(process)
        subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)
        subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
    return float(_instructions(out))


async def main() -> None:
    quick = "--quick" in sys.argv
    rounds = 4 if quick else ROUNDS
    print(f"metrics off vs on, same run, {rounds} alternating rounds (median):")
    for stream in (False, True):
        off, on, ratio, per_cpu = await rates(stream, rounds)
        unit = "events/s" if stream else "req/s"
        what = f"stream ({STREAMS} x 1000 deltas)" if stream else f"unary ({UNARY} message/send)"
        print(
            f"  {what}: off {off:,.0f} {unit}, on {on:,.0f} {unit}: on/off {ratio:.3f} "
            f"(per server CPU second: {per_cpu:.3f})"
        )
    if quick or shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        print("callgrind: skipped" + ("" if quick else " (valgrind is not on PATH)"))
        return
    with tempfile.TemporaryDirectory() as work:
        for stream in (False, True):
            off = await instructions(stream, False, Path(work))
            on = await instructions(stream, True, Path(work))
            unit = "per streamed event" if stream else "per unary request"
            print(
                f"  callgrind {unit}: off {off / 1e3:,.1f} k, on {on / 1e3:,.1f} k "
                f"instructions: on/off {on / off:.3f} (+{(on / off - 1) * 100:.1f} %)"
            )
        scrape = await scrape_instructions(Path(work))
        print(f"  callgrind one /metrics scrape: {scrape / 1e6:,.1f} M instructions")


if __name__ == "__main__":
    asyncio.run(main())
