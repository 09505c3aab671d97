"""Cost of tracing: the bridge server with tracing on vs off, in the same process.

"On" = an SDK tracer provider with a ``BatchSpanProcessor`` whose exporter drops the
spans (what is measured is span creation, propagation and the middleware's body read,
not an exporter's network I/O); the caller opens its ``invoke_agent`` CLIENT span and
sends ``traceparent``. "Off" = no provider: the API's no-op, no headers.

Workloads over loopback (uvicorn, raw httpx, A2A 0.3 JSON-RPC, sequential):
- unary: ``message/send`` answered by one final text;
- stream: ``message/stream`` of 1,000 text deltas.
Configurations run back to back in each round (alternating which goes first); the
ratio is the median of the rounds' on/off ratios (the machine is shared: its load moves
within seconds). The caller's spans are made before the clock starts (a real caller is
another process; this one shares the server's event loop).
a2a-sdk's own spans stay off (the bridge's default); with
``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=true`` they would add dozens of spans per request.

Then the OTLP encoding of the spans a traced run made: the bridge's encoder
(``trpc_bridge.telemetry.otlp_encode``, which its OTLP exporter uses) against the SDK's
on the same batch, checked to give the same bytes.

Run: ``make bench`` (or ``.venv/bin/python bench/tracing.py``).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import (
    encode_spans as sdk_encode_spans,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.codecs.trpc.keys import INTERACTION_SPEC_VERSION
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, EncodingOptions, ServerOptions
from trpc_bridge.telemetry.client import invoke_agent_span
from trpc_bridge.telemetry.otlp_encode import encode_spans
from trpc_bridge.telemetry.setup import set_w3c_propagator

UNARY_CALLS, DELTAS, STREAMS, ROUNDS = 300, 1_000, 3, 7


class DropSpans(SpanExporter):
    """Counts and forgets (the exporter's network I/O is not what is measured), keeping
    the first batch for the encoding comparison."""

    def __init__(self) -> None:
        self.count = 0
        self.sample: list[ReadableSpan] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.count += len(spans)
        if not self.sample:
            self.sample = list(spans)
        return SpanExportResult.SUCCESS


def encoding(spans: Sequence[ReadableSpan], rounds: int = 15) -> None:
    """The bridge's OTLP encoder against the SDK's on the same batch of served spans
    (what ``trpc-bridge``'s OTLP exporter does per batch in its export thread)."""

    def sdk(batch: Sequence[ReadableSpan]) -> bytes:
        data: bytes = sdk_encode_spans(batch).SerializePartialToString()
        return data

    assert encode_spans(spans) == sdk(spans)
    ratios, best = [], {"bridge": 1.0, "sdk": 1.0}
    for _ in range(rounds):
        times = {}
        for name, encode in (("bridge", encode_spans), ("sdk", sdk)):
            start = time.perf_counter()
            encode(spans)
            times[name] = (time.perf_counter() - start) / len(spans)
            best[name] = min(best[name], times[name])
        ratios.append(times["bridge"] / times["sdk"])
    print(
        f"OTLP encoding of {len(spans)} served spans: bridge {best['bridge'] * 1e6:.1f} µs/span,"
        f" SDK {best['sdk'] * 1e6:.1f} µs/span (best rounds); bridge/SDK time "
        f"{statistics.median(ratios):.2f} (median of {rounds} paired rounds), same bytes"
    )


async def agent_run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    if request.text == "stream":
        for index in range(DELTAS):
            yield AgentEvent.text_delta(f"t{index} ", "chatcmpl-bench")
        yield AgentEvent.final_text("done", "chatcmpl-bench")
    else:
        yield AgentEvent.final_text("It is 20°C in Beijing.", "chatcmpl-bench")


def body(method: str, text: str, index: int) -> dict[str, Any]:
    message = {
        "kind": "message",
        "messageId": f"m{index}",
        "contextId": f"ctx{index}",
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        # Ask for trpc's encoding: each delta is a frame (plain A2A sends the final text only).
        "metadata": {"interaction_spec_version": INTERACTION_SPEC_VERSION},
    }
    return {"jsonrpc": "2.0", "id": index, "method": method, "params": {"message": message}}


def caller_headers(provider: trace.TracerProvider, name: str) -> dict[str, str]:
    """What a traced caller sends: its invoke_agent span as ``traceparent`` (none when off).

    The span ends at once: only its creation and injection are on the caller's side."""
    with invoke_agent_span(name, tracer_provider=provider) as invocation:
        return dict(invocation.inject({}))


async def unary_rate(http: httpx.AsyncClient, url: str, provider: trace.TracerProvider) -> float:
    # The caller's spans are made before the clock starts: they are the caller's cost,
    # not the server's (a real caller is another process), and the client shares this loop.
    headers = [caller_headers(provider, "bench") for _ in range(UNARY_CALLS)]
    start = time.perf_counter()
    for index in range(UNARY_CALLS):
        response = await http.post(
            url, json=body("message/send", "hi", index), headers=headers[index]
        )
        assert "result" in response.json()
    return UNARY_CALLS / (time.perf_counter() - start)


async def stream_rate(http: httpx.AsyncClient, url: str, provider: trace.TracerProvider) -> float:
    """Delta events per second over ``STREAMS`` streams of ``DELTAS`` deltas."""
    frames = 0
    every = [caller_headers(provider, "bench") for _ in range(STREAMS)]
    start = time.perf_counter()
    for index, headers in enumerate(every):
        payload = body("message/stream", "stream", index)
        async with http.stream("POST", url, json=payload, headers=headers) as response:
            async for line in response.aiter_lines():
                frames += line.startswith("data:")
    assert frames >= STREAMS * DELTAS
    return STREAMS * DELTAS / (time.perf_counter() - start)


def options(provider: trace.TracerProvider) -> ServerOptions:
    # No coalescing: every delta is its own SSE frame, the worst case for per-frame costs.
    return ServerOptions(
        grpc_port=None,
        tracer_provider=provider,
        encoding=EncodingOptions(coalesce_after=10 * DELTAS),
    )


async def main() -> None:
    set_w3c_propagator()
    dropped = DropSpans()
    on = TracerProvider()
    on.add_span_processor(BatchSpanProcessor(dropped))
    off = trace.NoOpTracerProvider()
    agent = FunctionAgent(name="bench", description="answers", fn=agent_run)
    configs = {"off": off, "on": on}
    best: dict[tuple[str, str], float] = {}
    ratios: dict[str, list[float]] = {"unary": [], "stream": []}
    async with (
        BridgeServer(agent, options(off)) as plain,
        BridgeServer(agent, options(on)) as traced,
        httpx.AsyncClient(timeout=None) as http,
    ):
        urls = {"off": plain.jsonrpc_url, "on": traced.jsonrpc_url}
        for label, provider in configs.items():  # warm-up
            await unary_rate(http, urls[label], provider)
        for index in range(ROUNDS):
            for workload, measure in (("unary", unary_rate), ("stream", stream_rate)):
                rates = {}
                order = list(configs.items())
                for label, provider in order if index % 2 == 0 else order[::-1]:
                    rates[label] = await measure(http, urls[label], provider)
                    best[label, workload] = max(best.get((label, workload), 0.0), rates[label])
                ratios[workload].append(rates["on"] / rates["off"])
    on.shutdown()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average {load}; {ROUNDS} rounds, on and off back to back in each")
    for workload, unit in (("unary", "requests/s"), ("stream", "delta events/s")):
        off_rate, on_rate = best["off", workload], best["on", workload]
        ratio = statistics.median(ratios[workload])
        spread = f"{min(ratios[workload]):.2f}-{max(ratios[workload]):.2f}"
        print(
            f"{workload:6}  off {off_rate:9.0f} {unit}   on {on_rate:9.0f} {unit} (best rounds)"
            f"   on/off = {ratio:.2f}, median of paired rounds ({spread})"
            f"  overhead {(1 - ratio) * 100:.1f} %"
        )
    print(f"spans exported (and dropped) while on: {dropped.count}")
    encoding(dropped.sample)


if __name__ == "__main__":
    asyncio.run(main())
