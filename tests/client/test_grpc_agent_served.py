"""An agent behind ``AgentHost`` served by the bridge (``serve --agent grpc://…``, in
process): A2A callers see what they see from the same agent in process; the caller's
identity and trace reach the sidecar; a caller that goes away cancels the sidecar's run."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator

import pytest
from agenthost_sidecar import Script, ScriptedSidecar, serving
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind
from span_capture import in_memory_tracing

from trpc_bridge.agent import Agent
from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.client import RemoteAgent
from trpc_bridge.client.grpc_agent import GrpcAgent
from trpc_bridge.events import AgentRequest, ErrorType
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.telemetry.setup import set_w3c_propagator

_GENERATED_ID = re.compile(r"chatcmpl-[0-9a-f]{24}|artifact-[0-9a-f-]{36}")


async def _through_bridge(agent: Agent, transport: str, text: str) -> list[str]:
    """The events an A2A caller decodes, generated ids numbered by first appearance."""
    async with (
        BridgeServer(agent) as server,
        await RemoteAgent.connect(server.base_url, transport=transport) as remote,
    ):
        request = AgentRequest(text=text, user_id="alice")
        lines = [event.to_json_line() async for event in remote.run(request)]
    seen: dict[str, str] = {}
    return [
        _GENERATED_ID.sub(lambda m: seen.setdefault(m.group(0), f"<r{len(seen)}>"), line)
        for line in lines
    ]


@pytest.mark.parametrize("transport", ["jsonrpc", "grpc"])
@pytest.mark.parametrize("text", ["weather in London", "run some code", "please fail"])
async def test_a2a_callers_see_the_same_events_as_from_the_agent_in_process(
    transport: str, text: str
) -> None:
    sidecar = ScriptedSidecar()
    async with serving(sidecar) as url, await GrpcAgent.connect(url) as agent:
        over_grpc = await _through_bridge(agent, transport, text)
    in_process = await _through_bridge(demo_agent(), transport, text)
    assert over_grpc == in_process
    assert sidecar.calls[0].metadata["x-user-id"] == "alice"


async def test_the_callers_trace_reaches_the_sidecar() -> None:
    set_w3c_propagator()
    tracing = in_memory_tracing()
    provider, exporter = tracing.provider, tracing.exporter
    sidecar = ScriptedSidecar()
    async with _a2a_caller_of(sidecar, provider) as remote:
        assert [e async for e in remote.run(AgentRequest(text="weather?"))]
    spans = exporter.get_finished_spans()
    [to_sidecar] = [s for s in spans if s.kind == SpanKind.CLIENT and s.parent is not None]
    [server_span] = [s for s in spans if s.kind == SpanKind.SERVER]
    assert to_sidecar.parent is not None
    assert to_sidecar.parent.span_id == server_span.context.span_id
    traceparent = sidecar.calls[0].metadata["traceparent"]
    trace_id, span_id = traceparent.split("-")[1:3]
    assert int(trace_id, 16) == server_span.context.trace_id
    assert int(span_id, 16) == to_sidecar.context.span_id
    # One execute_tool span per call (docs/specs/trpc-interaction.md §6): an AgentHost sidecar is
    # the bridge's agent, not an A2A peer with its own tracing, so the bridge records it,
    # under its SERVER span, and the CLIENT span to the sidecar records none.
    [tool] = [s for s in spans if s.name == "execute_tool get_weather"]
    assert tool.parent is not None and tool.parent.span_id == server_span.context.span_id


@contextlib.asynccontextmanager
async def _a2a_caller_of(
    sidecar: ScriptedSidecar, provider: TracerProvider | None = None
) -> AsyncIterator[RemoteAgent]:
    """An A2A client of the bridge serving ``sidecar`` (``serve --agent grpc://…``)."""
    async with (
        serving(sidecar) as url,
        await GrpcAgent.connect(url, tracer_provider=provider) as agent,
        BridgeServer(agent, ServerOptions(tracer_provider=provider)) as server,
        await RemoteAgent.connect(server.base_url, tracer_provider=provider) as remote,
    ):
        yield remote


async def test_a_caller_that_goes_away_cancels_the_sidecars_run() -> None:
    sidecar = ScriptedSidecar(Script(delay=0.1))
    async with _a2a_caller_of(sidecar) as remote:
        events = remote.run(AgentRequest(text="weather?"))
        await anext(events)
        await events.aclose()  # type: ignore[attr-defined]
        await asyncio.wait_for(sidecar.calls[0].cancelled.wait(), 20)


async def test_a_misbehaving_sidecar_is_a_failed_task_for_the_caller() -> None:
    sidecar = ScriptedSidecar(Script(invalid_after=1))
    async with _a2a_caller_of(sidecar) as remote:
        events = [e async for e in remote.run(AgentRequest(text="weather?"))]
    last = events[-1]
    assert last.is_terminal_error() and last.error is not None
    assert last.error.type == ErrorType.RUN
    assert "violates the model" in last.error.message
