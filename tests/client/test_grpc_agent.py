"""``GrpcAgent`` against a scripted ``AgentHost`` sidecar: the events arrive as the
sidecar sent them, with identity and cancellation; every way the sidecar can fail ends
the run with one ``run_error`` event, never a hang or an exception."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from agenthost_sidecar import Script, ScriptedSidecar, serving, start
from parallel import refused_port

from trpc_bridge.client import RemoteAgentError
from trpc_bridge.client.grpc_agent import (
    GrpcAgent,
    GrpcAgentOptions,
    parse_agent_url,
    past_deadline,
)
from trpc_bridge.events import AgentEvent, AgentRequest, ErrorType

REQUEST = AgentRequest(
    text="weather in Paris",
    context_id="ctx-1",
    user_id="alice",
    invocation_id="inv-1",
    metadata={"trace": {"n": 2}},
)
#: Generous bounds that only a hang would reach.
PATIENCE = 20.0


async def _run(agent: GrpcAgent, request: AgentRequest = REQUEST) -> list[AgentEvent]:
    async def collect() -> list[AgentEvent]:
        return [event async for event in agent.run(request)]

    return await asyncio.wait_for(collect(), PATIENCE)


def _only_run_error(events: list[AgentEvent], *fragments: str) -> AgentEvent:
    last = events[-1]
    assert last.is_terminal_error() and last.error is not None
    assert last.error.type == ErrorType.RUN
    for fragment in fragments:
        assert fragment in last.error.message
    assert last.author == "weather-agent" and last.invocation_id == "inv-1"
    assert not any(e.is_terminal_error() for e in events[:-1])
    return last


async def test_events_identity_and_request_arrive_unchanged() -> None:
    sidecar = ScriptedSidecar()
    async with serving(sidecar) as url, await GrpcAgent.connect(url) as agent:
        assert (agent.name, agent.description) == (sidecar.agent.name, sidecar.agent.description)
        assert tuple(agent.skills) == tuple(sidecar.agent.skills)
        events = await _run(agent)
    [call] = sidecar.calls
    assert events == call.sent  # lossless, in order
    assert [e.object for e in events][-1] == "chat.completion"
    assert events[-1].choices[0].message.content == "It is 14°C in Paris."
    assert call.request == REQUEST
    assert call.metadata["x-user-id"] == "alice"
    assert not call.cancelled.is_set()


async def test_closing_the_iterator_cancels_the_sidecars_run() -> None:
    sidecar = ScriptedSidecar(Script(delay=0.05))
    async with serving(sidecar) as url, await GrpcAgent.connect(url) as agent:
        events = agent.run(REQUEST)
        first = await anext(events)
        assert first.choices[0].delta.reasoning_content
        await events.aclose()  # type: ignore[attr-defined]
        await asyncio.wait_for(sidecar.calls[0].cancelled.wait(), PATIENCE)


async def test_no_sidecar_at_connect_is_a_precise_error() -> None:
    with refused_port() as port:
        url = f"grpc://127.0.0.1:{port}?connect_timeout=0.5"
        with pytest.raises(RemoteAgentError, match=r"Describe at .* failed: DEADLINE_EXCEEDED"):
            await GrpcAgent.connect(url)


async def test_a_sidecar_gone_after_connect_is_a_run_error() -> None:
    sidecar = ScriptedSidecar()
    async with serving(sidecar) as url:
        agent = await GrpcAgent.connect(f"{url}?connect_timeout=0.5")
    # The port held at once: a parallel test's server given it again would answer.
    with refused_port(int(url.rpartition(":")[2])):
        async with agent:
            events = await _run(agent)
    assert len(events) == 1
    _only_run_error(events, "is unreachable (no connection within 0.5s)")


async def test_a_restarted_sidecar_is_waited_for() -> None:
    """Down for a moment (a restart on the same port): the run is sent again once it is
    back, within connect_timeout, and succeeds."""
    sidecar = ScriptedSidecar()
    server, port = await start(sidecar)
    agent = await GrpcAgent.connect(f"grpc://127.0.0.1:{port}?connect_timeout=15")
    await server.stop(grace=None)
    try:
        running = asyncio.ensure_future(_run(agent))
        await asyncio.sleep(0.5)
        server, _ = await start(sidecar, port)
        events = await running
    finally:
        await agent.aclose()
        await server.stop(grace=None)
    assert events == sidecar.calls[-1].sent
    assert not events[-1].is_terminal_error()


async def test_a_slow_sidecar_hits_idle_timeout_and_is_cancelled() -> None:
    sidecar = ScriptedSidecar(Script(first_delay=30))
    async with serving(sidecar) as url, await GrpcAgent.connect(f"{url}?idle_timeout=0.3") as agent:
        events = await _run(agent)
        _only_run_error(events, "sent no event for 0.3s")
        await asyncio.wait_for(sidecar.calls[0].cancelled.wait(), PATIENCE)


async def test_a_run_longer_than_timeout_fails() -> None:
    sidecar = ScriptedSidecar(Script(delay=1.0))
    async with serving(sidecar) as url, await GrpcAgent.connect(f"{url}?timeout=0.5s") as agent:
        events = await _run(agent)
    assert len(events) == 2  # one event, then the deadline
    _only_run_error(events, "did not finish within 0.5s")


@pytest.mark.parametrize(
    ("code", "elapsed", "timeout", "expected"),
    [
        (grpc.StatusCode.DEADLINE_EXCEEDED, 0.5, 0.5, True),
        # The sidecar's own deadline reset the stream before the client's timer fired
        # (seen on a busy machine: "CANCELLED: Stream removed (RST_STREAM … code 8)").
        (grpc.StatusCode.CANCELLED, 0.51, 0.5, True),
        (grpc.StatusCode.CANCELLED, 0.2, 0.5, False),  # cancelled for another reason
        (grpc.StatusCode.DEADLINE_EXCEEDED, 0.5, None, False),  # no deadline was set
        (grpc.StatusCode.UNAVAILABLE, 0.6, 0.5, False),
    ],
)
def test_a_deadline_is_told_however_grpc_reports_it(
    code: grpc.StatusCode, elapsed: float, timeout: float | None, expected: bool
) -> None:
    assert past_deadline(code, elapsed, timeout) is expected


async def test_an_event_that_violates_the_model_fails_the_run() -> None:
    sidecar = ScriptedSidecar(Script(invalid_after=2, delay=0.05))
    async with serving(sidecar) as url, await GrpcAgent.connect(url) as agent:
        events = await _run(agent)
        assert events[:2] == sidecar.calls[0].sent[:2]
        _only_run_error(events, "violates the model", "'video'")
        await asyncio.wait_for(sidecar.calls[0].cancelled.wait(), PATIENCE)


async def test_bytes_that_are_no_event_fail_the_run() -> None:
    sidecar = ScriptedSidecar(Script(garbage_after=1))
    async with serving(sidecar) as url, await GrpcAgent.connect(url) as agent:
        events = await _run(agent)
    assert len(events) == 2
    _only_run_error(events, "violates the model", "does not parse")


@pytest.mark.parametrize("code", [grpc.StatusCode.INTERNAL, grpc.StatusCode.UNAVAILABLE])
async def test_a_stream_dropped_midway_fails_and_is_not_sent_again(
    code: grpc.StatusCode,
) -> None:
    sidecar = ScriptedSidecar(Script(abort_after=3, abort_code=code))
    async with serving(sidecar) as url, await GrpcAgent.connect(url) as agent:
        events = await _run(agent)
    assert len(events) == 4
    _only_run_error(events, f"failed: {code.name}: sidecar lost its model")
    assert len(sidecar.calls) == 1  # events had arrived: a retry would repeat them


async def test_the_agent_keeps_serving_after_failures() -> None:
    sidecar = ScriptedSidecar(Script(invalid_after=0))
    async with serving(sidecar) as url, await GrpcAgent.connect(url) as agent:
        _only_run_error(await _run(agent), "violates the model")
        sidecar.script = Script()
        events = await _run(agent)
    assert events == sidecar.calls[-1].sent


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://127.0.0.1:1", "expected grpc://"),
        ("grpc://", "expected grpc://"),
        ("grpc://h:1/path", "expected grpc://"),
        ("grpc://h:1?deadline=3", "unknown option 'deadline'"),
        ("grpc://h:1?timeout=soon", "not a number"),
        ("grpc://h:1?idle_timeout=0", "must be positive"),
    ],
)
def test_bad_urls_are_refused(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_agent_url(url)


def test_url_options() -> None:
    target, options = parse_agent_url("grpc://[::1]:5005?timeout=30s&idle_timeout=2.5")
    assert target == "[::1]:5005"
    assert options == GrpcAgentOptions(connect_timeout=10.0, timeout=30.0, idle_timeout=2.5)


async def test_a_user_id_that_cannot_be_grpc_metadata_is_a_run_error() -> None:
    sidecar = ScriptedSidecar()
    async with serving(sidecar) as url, await GrpcAgent.connect(url) as agent:
        events = await _run(agent, REQUEST.model_copy(update={"user_id": "Zoë"}))
        assert len(events) == 1
        _only_run_error(events, "user id is not printable ASCII")
        assert not sidecar.calls
        assert await _run(agent) == sidecar.calls[0].sent  # and the agent still works
