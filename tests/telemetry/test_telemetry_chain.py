"""client → proxy agent → agent: one trace, every hop linked to the one before.

The proxy is an a2a-sdk executor that calls the next agent the way the bridge's remote
agent does: an ``invoke_agent`` CLIENT span under the current (server) context, carried
by the call context to the trace interceptor.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import Event, EventQueue
from a2a.types import Message, StreamResponse, Task
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind
from span_capture import Tracing

from trpc_bridge.telemetry.client import invoke_agent_span
from trpc_bridge.telemetry.spans import AgentCall

from .loopback import AGENT_NAME, LoopbackServer, call, connect, serve, user_message


@dataclass
class ForwardingExecutor(AgentExecutor):
    downstream: LoopbackServer
    binding: str
    tracing: Tracing

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        async with connect(
            self.downstream, self.binding, tracer_provider=self.tracing.provider
        ) as client:
            with invoke_agent_span(
                "downstream",
                AgentCall(transport=self.binding),
                tracer_provider=self.tracing.provider,
            ) as invocation:
                async for response in client.send_message(
                    user_message(), context=invocation.call_context()
                ):
                    await event_queue.enqueue_event(_retarget(response, context))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def _retarget(response: StreamResponse, context: RequestContext) -> Event:
    """The downstream event, moved onto the proxy's own task."""
    event: Event = getattr(response, response.WhichOneof("payload"))
    task_id, context_id = context.task_id or "", context.context_id or ""
    if isinstance(event, Task):
        event.id = task_id
    elif not isinstance(event, Message):
        event.task_id = task_id
    event.context_id = context_id
    return event


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_one_trace_through_a_proxy(tracing: Tracing, binding: str) -> None:
    async with serve(tracer_provider=tracing.provider) as agent:
        forwarding = ForwardingExecutor(agent, binding, tracing)
        async with (
            serve(executor=forwarding, tracer_provider=tracing.provider) as proxy,
            connect(proxy, binding, tracer_provider=tracing.provider) as client,
        ):
            with invoke_agent_span(AGENT_NAME, tracer_provider=tracing.provider) as invocation:
                await call(client, user_message(), invocation.call_context())
        spans = await tracing.wait_for(
            lambda s: sum(span.kind == SpanKind.SERVER for span in s) == 2
        )
    caller, proxy_server, proxy_client, agent_server = _chain(spans)
    chain = [caller, proxy_server, proxy_client, agent_server]
    assert {span.context.trace_id for span in chain} == {caller.context.trace_id}
    for parent, child in itertools.pairwise(chain):
        assert child.parent is not None
        assert child.parent.span_id == parent.context.span_id
    assert agent.seen[0].span_context.span_id == agent_server.context.span_id


def _chain(spans: Sequence[ReadableSpan]) -> list[ReadableSpan]:
    """caller CLIENT, proxy SERVER, proxy CLIENT, agent SERVER (the two servers share a
    name; the agent's is the one whose parent is the proxy's client span)."""
    [caller] = [s for s in spans if s.kind == SpanKind.CLIENT and s.name.endswith(AGENT_NAME)]
    [proxy_client] = [s for s in spans if s.name == "invoke_agent downstream"]
    servers = [s for s in spans if s.kind == SpanKind.SERVER]
    [agent_server] = [
        s for s in servers if s.parent and s.parent.span_id == proxy_client.context.span_id
    ]
    [proxy_server] = [s for s in servers if s is not agent_server]
    return [caller, proxy_server, proxy_client, agent_server]
