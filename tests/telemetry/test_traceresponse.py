"""AG-UI runs get the SERVER span A2A calls get, and every traced response names its span
in W3C's ``traceresponse`` header, which is how the playground shows a run's trace id.
No tracing, no header: the page then says that nothing was recorded."""

from __future__ import annotations

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from server.helpers import go_message, jsonrpc

from trpc_bridge.demo_agent import demo_agent
from trpc_bridge.server import BridgeServer, ServerOptions

from .span_capture import Tracing

RUN = {
    "threadId": "thread-7",
    "runId": "run-1",
    "messages": [{"id": "m1", "role": "user", "content": [{"type": "text", "text": "weather?"}]}],
}
RPC = jsonrpc("message/send", {"message": go_message("weather?")})
SERVER = trace.SpanKind.SERVER
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"


def client(provider: trace.TracerProvider) -> httpx.AsyncClient:
    app = BridgeServer(demo_agent(), ServerOptions(tracer_provider=provider)).starlette_app()
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bridge")


def header_of(span: ReadableSpan) -> str:
    context = span.context
    assert context is not None and context.trace_flags.sampled
    # The flags are the span's own: sampled, and (W3C level 2) whether the id is random.
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"


async def test_an_agui_run_names_its_server_span(tracing: Tracing) -> None:
    async with client(tracing.provider) as http:
        response = await http.post("/agui", json=RUN, headers={"X-User-ID": "alice"})
    assert response.status_code == 200
    [span] = await tracing.wait_for(lambda spans: len(spans) == 1)
    assert span.name == "invoke_agent weather-agent"
    assert span.kind == SERVER
    assert span.attributes is not None
    assert span.attributes["a2a.transport"] == "AG-UI"
    assert span.attributes["gen_ai.conversation.id"] == "thread-7"
    assert "a2a.protocol.version" not in span.attributes
    assert response.headers["traceresponse"] == header_of(span)


async def test_a_callers_trace_is_continued(tracing: Tracing) -> None:
    headers = {"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"}
    async with client(tracing.provider) as http:
        response = await http.post("/agui", json=RUN, headers=headers)
    [span] = await tracing.wait_for(lambda spans: len(spans) == 1)
    assert span.parent is not None and f"{span.parent.span_id:016x}" == CALLER_SPAN
    assert response.headers["traceresponse"].split("-")[1] == CALLER_TRACE


async def test_a2a_message_calls_carry_it_too(tracing: Tracing) -> None:
    async with client(tracing.provider) as http:
        response = await http.post("/", json=RPC)
        card = await http.get("/.well-known/agent-card.json")
    spans = await tracing.wait_for(lambda spans: any(s.kind == SERVER for s in spans))
    [span] = [s for s in spans if s.kind == SERVER]  # (the tool's span is its child)
    assert response.headers["traceresponse"] == header_of(span)
    assert "traceresponse" not in card.headers  # nothing traced, nothing named


@pytest.mark.parametrize("path", ["/agui", "/"])
async def test_no_tracing_no_header(path: str) -> None:
    async with client(trace.NoOpTracerProvider()) as http:
        response = await http.post(path, json=RUN if path == "/agui" else RPC)
    assert response.status_code == 200
    assert "traceresponse" not in response.headers
