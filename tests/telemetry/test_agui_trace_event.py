"""An AG-UI run names its trace in-band: a CUSTOM ``traceparent`` event carrying the W3C
``traceparent`` of the run's SERVER span, which is how the playground shows a run's trace
id. No tracing, no event: the page then says that nothing was recorded."""

from __future__ import annotations

import json
from typing import Any

import httpx
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from span_capture import Tracing

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer, ServerOptions

SERVER = trace.SpanKind.SERVER
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


def run_input(text: str) -> dict[str, Any]:
    message = {"id": "m1", "role": "user", "content": [{"type": "text", "text": text}]}
    return {"threadId": "thread-7", "runId": "run-1", "messages": [message]}


async def run(provider: trace.TracerProvider, text: str, **headers: str) -> list[dict[str, Any]]:
    app = BridgeServer(demo_agent(), ServerOptions(tracer_provider=provider)).starlette_app()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bridge") as http:
        response = await http.post("/agui", json=run_input(text), headers=headers)
    assert response.status_code == 200
    return [json.loads(line[6:]) for line in response.text.splitlines() if line[:6] == "data: "]


async def server_span(tracing: Tracing) -> ReadableSpan:
    spans = await tracing.wait_for(lambda spans: any(s.kind == SERVER for s in spans))
    [span] = [s for s in spans if s.kind == SERVER]
    return span


async def test_the_run_names_its_server_span_once(tracing: Tracing) -> None:
    events = await run(tracing.provider, "weather in Paris", **{"X-User-ID": "alice"})
    span = await server_span(tracing)
    context = span.context
    assert context is not None
    assert span.attributes is not None and span.attributes["a2a.transport"] == "AG-UI"
    custom = [e for e in events if e["type"] == "CUSTOM"]
    # The span's own flags: sampled, and (W3C level 2) whether the trace id is random.
    expected = f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"
    assert custom == [{"type": "CUSTOM", "name": "traceparent", "value": expected}]
    # Inside the run: after RUN_STARTED, before the agent's first event.
    assert [e["type"] for e in events[:3]] == ["RUN_STARTED", "CUSTOM", "REASONING_START"]


async def test_a_callers_trace_is_continued(tracing: Tracing) -> None:
    events = await run(
        tracing.provider, "weather in Paris", traceparent=f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"
    )
    span = await server_span(tracing)
    assert span.parent is not None and f"{span.parent.span_id:016x}" == CALLER_SPAN
    [custom] = [e for e in events if e["type"] == "CUSTOM"]
    assert custom["value"].split("-")[1] == CALLER_TRACE


async def test_a_failing_run_names_it_before_the_error(tracing: Tracing) -> None:
    events = await run(tracing.provider, "please fail")
    types = [e["type"] for e in events]
    assert types.index("CUSTOM") < types.index("RUN_ERROR") == len(types) - 1


async def test_no_tracing_no_event() -> None:
    events = await run(trace.NoOpTracerProvider(), "weather in Paris")
    assert events[-1]["type"] == "RUN_FINISHED"
    assert all(e["type"] != "CUSTOM" for e in events)
