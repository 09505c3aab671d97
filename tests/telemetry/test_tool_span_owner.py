"""One tool call, one ``execute_tool`` span: recorded by the process that runs the tool
(the agent's server), not by the caller's client span nor by a proxy's server or client
span (``docs/specs/trpc-interaction.md`` §6). A proxy still marks its spans failed when the run
fails."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode
from span_capture import Tracing

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.client import RemoteAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions


async def _through_a_proxy(
    tracing: Tracing, text: str, transport: str = "jsonrpc"
) -> tuple[list[AgentEvent], Sequence[ReadableSpan]]:
    """caller → proxy → agent (the demo), all traced: the caller's events and every span."""
    options = ServerOptions(port=0, grpc_port=0, tracer_provider=tracing.provider)
    async with (
        BridgeServer(demo_agent(), options) as agent_server,
        await RemoteAgent.connect(agent_server.base_url, tracer_provider=tracing.provider) as up,
        BridgeServer(up, options) as proxy,
        await RemoteAgent.connect(
            proxy.base_url, transport=transport, tracer_provider=tracing.provider
        ) as caller,
    ):
        events = [e async for e in caller.run(AgentRequest(text=text))]
        spans = await tracing.wait_for(
            lambda found: (
                sum(s.kind == SpanKind.SERVER for s in found) == 2
                and sum(s.kind == SpanKind.CLIENT for s in found) == 2
            )
        )
    return events, spans


@pytest.mark.parametrize("transport", ["jsonrpc", "grpc"])
async def test_caller_proxy_agent_record_one_tool_span(tracing: Tracing, transport: str) -> None:
    events, spans = await _through_a_proxy(tracing, "weather in Oslo", transport)
    assert any(e.choices and e.choices[0].message.tool_calls for e in events)
    [tool] = [s for s in spans if s.name.startswith("execute_tool")]
    assert tool.name == "execute_tool get_weather"
    # Walk up from the tool: agent SERVER ← proxy CLIENT ← proxy SERVER ← caller CLIENT.
    by_id = {s.context.span_id: s for s in spans}
    chain = [tool]
    while chain[-1].parent is not None:
        chain.append(by_id[chain[-1].parent.span_id])
    kinds = [s.kind for s in chain[1:]]
    assert kinds == [SpanKind.SERVER, SpanKind.CLIENT, SpanKind.SERVER, SpanKind.CLIENT]


async def test_a_proxy_still_marks_a_failed_run(tracing: Tracing) -> None:
    events, spans = await _through_a_proxy(tracing, "please fail")
    assert events[-1].is_terminal_error()
    assert all(
        s.status.status_code == StatusCode.ERROR
        for s in spans
        if s.kind in (SpanKind.SERVER, SpanKind.CLIENT)
    )
