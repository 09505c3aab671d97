"""``RemoteAgent``'s CLIENT span against the bridge server, on every transport: the
server's SERVER span is its child, and both carry the task id the server assigned."""

from __future__ import annotations

import pytest
from opentelemetry.trace import SpanKind, StatusCode
from span_capture import Tracing

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.client import RemoteAgent
from trpc_bridge.events import AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.telemetry.spans import A2A_TASK_ID


@pytest.mark.parametrize("transport", ["jsonrpc", "rest", "grpc"])
async def test_client_span_parents_the_server_span_and_knows_the_task(
    tracing: Tracing, transport: str
) -> None:
    options = ServerOptions(port=0, grpc_port=0, tracer_provider=tracing.provider)
    async with (
        BridgeServer(demo_agent(), options) as server,
        await RemoteAgent.connect(
            server.base_url, transport=transport, tracer_provider=tracing.provider
        ) as agent,
    ):
        request = AgentRequest(text="weather in Oslo", context_id="ctx-span")
        events = [event async for event in agent.run(request)]
        assert events
        spans = await tracing.wait_for(
            lambda found: (
                any(s.kind == SpanKind.SERVER for s in found)
                and any(s.kind == SpanKind.CLIENT for s in found)
            )
        )
    [client] = [s for s in spans if s.kind == SpanKind.CLIENT]
    [server_span] = [s for s in spans if s.kind == SpanKind.SERVER]
    assert server_span.parent is not None
    assert server_span.parent.span_id == client.context.span_id
    assert server_span.context.trace_id == client.context.trace_id
    assert client.attributes is not None and server_span.attributes is not None
    assert client.attributes[A2A_TASK_ID] == server_span.attributes[A2A_TASK_ID]
    assert str(client.attributes[A2A_TASK_ID]).startswith("task-")


@pytest.mark.parametrize("transport", ["jsonrpc", "grpc"])
async def test_a_failed_run_marks_both_spans_failed(tracing: Tracing, transport: str) -> None:
    options = ServerOptions(port=0, grpc_port=0, tracer_provider=tracing.provider)
    async with (
        BridgeServer(demo_agent(), options) as server,
        await RemoteAgent.connect(
            server.base_url, transport=transport, tracer_provider=tracing.provider
        ) as agent,
    ):
        events = [e async for e in agent.run(AgentRequest(text="please fail"))]
        assert events[-1].is_terminal_error()
        spans = await tracing.wait_for(
            lambda found: {s.kind for s in found} >= {SpanKind.SERVER, SpanKind.CLIENT}
        )
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        [span] = [s for s in spans if s.kind == kind]
        assert span.status.status_code == StatusCode.ERROR, kind
        assert span.attributes is not None
        assert span.attributes["error.type"] == "api_error", kind
