"""What tracing costs a unary request, counted in instructions rather than timed.

Timing the traced and untraced server side by side (``vs_go.py``, ``tracing.py``) moves
by ±5 % from run to run on a shared machine, as much as the cost being measured. Here
each server (``trpc-bridge serve --agent trpc_bridge.agents.scenarios:text``, as users
start it) runs under valgrind's callgrind (:mod:`_callgrind`), which counts the
instructions the process executes (every thread) while switched on: after a warm-up, for
``REQUESTS`` sequential A2A 0.3 ``message/send`` calls with a ``traceparent``. Traced,
the server exports OTLP/HTTP to a sink in this process, its batch processor set so that
exactly one full 512-span batch is encoded and sent inside the window (the export's
cost, amortised as in a busy server). The OTLP endpoint turns OTLP metrics on as well, as
it does for a user who sets it; a third server is traced with metrics off
(``OTEL_METRICS_EXPORTER=none``), so that tracing's own share shows. Printed: instructions
per request untraced, traced (with the metrics the endpoint brings, and without), and the
ratios.

Needs valgrind (``callgrind``, ``callgrind_control``); skipped without it.
Run: ``make bench`` or ``.venv/bin/python bench/tracing_instructions.py``.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _callgrind
from _rawhttp import OtlpSink, exchange, request_bytes
from vs_go import TRACEPARENT, body

WARM_UP, REQUESTS = 50, 520


async def per_request(
    traced: bool, sink: OtlpSink, work: Path, metrics: bool = True
) -> tuple[float, int]:
    """Instructions per request, and the OTLP exports that happened in the window;
    ``metrics``: a traced server also meters (what its OTLP endpoint turns on)."""
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
    if traced and not metrics:
        env["OTEL_METRICS_EXPORTER"] = "none"
    args = ["serve", "--host", "127.0.0.1", "--port", "0", "--grpc-port", "-1"]
    args += ["--agent", "trpc_bridge.agents.scenarios:text", "--no-trace-view"]
    headers = {"traceparent": TRACEPARENT}
    with _callgrind.bridge(out, args, env) as server:
        for index in range(WARM_UP):
            await exchange(server.url, request_bytes(server.url, body("message/send", index)))
        _callgrind.start(server)
        exports = sink.exports
        for index in range(REQUESTS):
            request = request_bytes(server.url, body("message/send", index), headers)
            await exchange(server.url, request)
        await asyncio.sleep(8)  # the export thread finishes the batch (slow under valgrind)
        total = _callgrind.stop(server, out)
        exports = sink.exports - exports
    return total / REQUESTS, exports


async def measure() -> tuple[float, float, int]:
    """Instructions per request untraced and traced, and the exports in the window."""
    with tempfile.TemporaryDirectory() as work:
        async with OtlpSink() as sink:
            untraced, _ = await per_request(False, sink, Path(work))
            traced, exported = await per_request(True, sink, Path(work))
    return untraced, traced, exported


async def traced_alone() -> float:
    """Instructions per request traced with metrics off (tracing's own share)."""
    with tempfile.TemporaryDirectory() as work:
        async with OtlpSink() as sink:
            alone, _ = await per_request(True, sink, Path(work), metrics=False)
    return alone


async def main() -> None:
    if not _callgrind.available():
        print("skipped: valgrind (callgrind) is not on PATH")
        return
    untraced, traced, exported = await measure()
    alone = await traced_alone()
    print(
        f"unary message/send, {REQUESTS} requests: untraced {untraced / 1e6:.3f} M "
        f"instructions per request, traced {traced / 1e6:.3f} M: traced/untraced "
        f"{traced / untraced:.3f} (+{(traced / untraced - 1) * 100:.1f} %; "
        f"{exported} OTLP export(s) in the window); traced with metrics off "
        f"{alone / 1e6:.3f} M (+{(alone / untraced - 1) * 100:.1f} %)"
    )


if __name__ == "__main__":
    asyncio.run(main())
