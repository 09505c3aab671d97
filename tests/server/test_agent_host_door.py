"""The bridge answers ``trpc_bridge.v1.AgentHost`` on its gRPC port: a Python gRPC client
gets the served agent's events as they are in process, with the one identity rule, the
caller's trace, cancellation, and precise errors for bad input."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import grpc
import pytest
from opentelemetry.trace import SpanKind
from span_capture import in_memory_tracing

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.client.grpc_agent import GrpcAgent
from trpc_bridge.codecs.agent_proto import event_from_proto, request_to_proto
from trpc_bridge.events import AgentEvent, AgentRequest, ErrorType
from trpc_bridge.names import TRANSPORT_AGENT_HOST
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.telemetry.setup import set_w3c_propagator
from trpc_bridge.telemetry.spans import A2A_TRANSPORT
from trpc_bridge.v1 import agent_pb2 as pb
from trpc_bridge.v1 import agent_pb2_grpc

from .helpers import blocking_agent

_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


def _without_ids(events: list[AgentEvent]) -> list[AgentEvent]:
    """Response, event ids and times are random per run: the rest must be equal."""
    ids: dict[str, str] = {}
    return [
        event.model_copy(
            update={
                "id": ids.setdefault(event.id, f"r{len(ids)}") if event.id else "",
                "event_id": "",
                "timestamp": 0.0,
            }
        )
        for event in events
    ]


@pytest.mark.parametrize("text", ["weather in Paris", "run some code", "please fail"])
async def test_the_agents_events_as_in_process(text: str) -> None:
    agent = demo_agent()
    async with (
        BridgeServer(agent) as server,
        await GrpcAgent.connect(f"grpc://{server.grpc_address}") as remote,
    ):
        assert (remote.name, remote.description) == (agent.name, agent.description)
        assert tuple(remote.skills) == tuple(agent.skills)
        over_grpc = [e async for e in remote.run(AgentRequest(text=text))]
    in_process = [e async for e in agent.run(AgentRequest(text=text))]
    assert _without_ids(over_grpc) == _without_ids(in_process)


def _recording_agent(seen: list[AgentRequest]) -> FunctionAgent:
    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        seen.append(request)
        yield AgentEvent.final_text(f"hello {request.user_id}", "chatcmpl-hi")

    return FunctionAgent(name="recorder", description="records", fn=run)


async def _run_raw(
    address: str, request: pb.AgentRequest, metadata: list[tuple[str, str]]
) -> list[AgentEvent]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = agent_pb2_grpc.AgentHostStub(channel)  # type: ignore[no-untyped-call]
        return [event_from_proto(m) async for m in stub.Run(request, metadata=metadata)]


@pytest.mark.parametrize(
    ("metadata", "user"),
    [([("x-user-id", "  alice ")], "alice"), ([], "anonymous")],
    ids=["metadata", "none"],
)
async def test_identity_comes_from_metadata_only(
    metadata: list[tuple[str, str]], user: str
) -> None:
    seen: list[AgentRequest] = []
    request = AgentRequest(text="hi", user_id="mallory", context_id="ctx-9", metadata={"k": 1})
    async with BridgeServer(_recording_agent(seen)) as server:
        events = await _run_raw(server.grpc_address, request_to_proto(request), metadata)
    assert events[-1].choices[0].message.content == f"hello {user}"
    assert seen == [request.model_copy(update={"user_id": user})]


@pytest.mark.parametrize(
    ("request_message", "metadata", "problem"),
    [
        (pb.AgentRequest(text="hi"), [("x-user-id", "u" * 300)], "longer than 255"),
        (
            pb.AgentRequest(content_parts=[pb.ContentPart(type="video")]),
            [],
            "content part type 'video'",
        ),
    ],
    ids=["identity", "request"],
)
async def test_bad_input_is_invalid_argument_and_the_server_keeps_serving(
    request_message: pb.AgentRequest, metadata: list[tuple[str, str]], problem: str
) -> None:
    seen: list[AgentRequest] = []
    async with BridgeServer(_recording_agent(seen)) as server:
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await _run_raw(server.grpc_address, request_message, metadata)
        assert failure.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert problem in (failure.value.details() or "")
        assert not seen
        assert await _run_raw(server.grpc_address, pb.AgentRequest(text="again"), [])


async def test_an_agent_that_raises_is_a_run_error_event(caplog: pytest.LogCaptureFixture) -> None:
    async def explodes(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        yield AgentEvent.text_delta("Working", "chatcmpl-boom")
        raise ConnectionError("cannot reach postgres://secret@db")

    agent = FunctionAgent(name="exploder", description="raises", fn=explodes)
    with caplog.at_level(logging.ERROR):
        async with BridgeServer(agent) as server:
            events = await _run_raw(server.grpc_address, pb.AgentRequest(text="boom"), [])
    assert events[-1].error is not None
    assert events[-1].error.type == ErrorType.RUN
    assert events[-1].error.message == "agent failed: ConnectionError"


async def test_an_event_the_contract_cannot_carry_ends_the_run_with_a_run_error() -> None:
    async def bad_time(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        yield AgentEvent.text_delta("ok", "chatcmpl-1")
        yield AgentEvent(timestamp=float("nan"))
        yield AgentEvent.text_delta("never sent", "chatcmpl-1")

    agent = FunctionAgent(name="nan", description="nan", fn=bad_time)
    async with BridgeServer(agent) as server:
        events = await _run_raw(server.grpc_address, pb.AgentRequest(), [])
    assert len(events) == 2
    assert events[-1].error is not None and "cannot be sent over AgentHost" in (
        events[-1].error.message
    )


async def test_a_caller_that_cancels_stops_the_agent() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()
    async with BridgeServer(blocking_agent(started, stopped)) as server:
        async with grpc.aio.insecure_channel(server.grpc_address) as channel:
            stub = agent_pb2_grpc.AgentHostStub(channel)  # type: ignore[no-untyped-call]
            call = stub.Run(pb.AgentRequest(text="wait"))
            assert (await call.read()).choices[0].delta.content == "first"
            await asyncio.wait_for(started.wait(), 20)
            call.cancel()
        await asyncio.wait_for(stopped.wait(), 20)


async def test_the_callers_trace_parents_the_server_span() -> None:
    set_w3c_propagator()
    tracing = in_memory_tracing()
    provider, exporter = tracing.provider, tracing.exporter
    metadata = [("traceparent", f"00-{_TRACE_ID}-00f067aa0ba902b7-01")]
    options = ServerOptions(tracer_provider=provider)
    async with BridgeServer(demo_agent(), options) as server:
        await _run_raw(server.grpc_address, pb.AgentRequest(text="weather?"), metadata)
    [span] = [s for s in exporter.get_finished_spans() if s.kind == SpanKind.SERVER]
    assert f"{span.context.trace_id:032x}" == _TRACE_ID
    assert span.parent is not None and f"{span.parent.span_id:016x}" == "00f067aa0ba902b7"
    assert span.attributes is not None
    assert span.attributes[A2A_TRANSPORT] == TRANSPORT_AGENT_HOST
    tools = [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool")]
    assert [s.parent.span_id for s in tools if s.parent] == [span.context.span_id]
