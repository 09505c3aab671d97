"""Tracing off in the middle of a chain: the bridge opens no span, but a proxy passes the
caller's trace context on unchanged (W3C: forward what you do not take part in).

Real pieces only: a caller ``RemoteAgent`` with an explicit ``traceparent`` → a
``BridgeServer`` serving a ``RemoteAgent`` (the proxy) → a ``BridgeServer`` whose agent
reports the trace id current while it runs. Tracing is off everywhere — both servers and
both clients are given a no-op tracer provider, whatever provider another test of the
same process installed globally.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from opentelemetry import baggage, trace

from trpc_bridge import AgentEvent, AgentRequest, FunctionAgent
from trpc_bridge.client import RemoteAgent
from trpc_bridge.server import BridgeServer, ServerOptions

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


async def _report_trace(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    context = trace.get_current_span().get_span_context()
    seen = f"{context.trace_id:032x}" if context.is_valid else "none"
    text = f"trace={seen} baggage={baggage.get_baggage('tenant')}"
    yield AgentEvent.final_text(text, "chatcmpl-trace")


OFF = trace.NoOpTracerProvider()


def _options() -> ServerOptions:
    return ServerOptions(port=0, grpc_port=0, tracer_provider=OFF)


@pytest.mark.parametrize("transport", ["jsonrpc", "rest", "grpc"])
async def test_a_proxy_with_tracing_off_forwards_the_callers_trace(transport: str) -> None:
    upstream_agent = FunctionAgent("upstream", "reports its trace context", _report_trace)
    headers = {"traceparent": TRACEPARENT, "baggage": "tenant=acme"}
    async with (
        BridgeServer(upstream_agent, _options()) as upstream,
        await RemoteAgent.connect(upstream.base_url, tracer_provider=OFF) as remote,
        BridgeServer(remote, _options()) as proxy,
        await RemoteAgent.connect(
            proxy.base_url, transport=transport, headers=headers, tracer_provider=OFF
        ) as caller,
    ):
        events = [e async for e in caller.run(AgentRequest(text="hi"))]
    texts = [c.message.content for e in events for c in e.choices if c.message.content]
    assert texts == [f"trace={TRACE_ID} baggage=acme"]


async def test_without_a_caller_trace_nothing_is_invented() -> None:
    agent = FunctionAgent("upstream", "reports its trace context", _report_trace)
    async with (
        BridgeServer(agent, _options()) as server,
        await RemoteAgent.connect(server.base_url, tracer_provider=OFF) as caller,
    ):
        events = [e async for e in caller.run(AgentRequest(text="hi"))]
    texts = [c.message.content for e in events for c in e.choices if c.message.content]
    assert texts == ["trace=none baggage=None"]
