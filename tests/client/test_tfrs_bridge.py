"""RemoteAgent ↔ the bridge server with tfrs progress, on every transport: for the trpc
dialect progress changes none of the events (it goes to the sink only); for a plain-A2A
caller it becomes reasoning and tool events; a second client that resubscribes while the
task works, and ``tasks/get`` afterwards, merge the same progress as the first."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from test_client_bridge_server import WIRES, _content

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.client import RemoteAgent
from trpc_bridge.codecs.tfrs import ProgressConsumer, ProgressItem
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.message_aggregate import aggregate
from trpc_bridge.names import new_response_id
from trpc_bridge.server import BridgeServer

IDS = [f"{t}-{v}" for t, v in WIRES]
PROMPT = "weather in Shanghai"
THINKING = "The user asks about the weather in Shanghai; I should call get_weather."
ANSWER = "It is 24°C in Shanghai."


def _merged(items: list[ProgressItem]) -> ProgressConsumer:
    consumer = ProgressConsumer()
    consumer.feed_items(items)
    return consumer


@pytest.fixture
async def demo() -> AsyncIterator[BridgeServer]:
    async with BridgeServer(demo_agent()) as server:
        yield server


@pytest.mark.parametrize(("transport", "version"), WIRES, ids=IDS)
async def test_trpc_events_are_unchanged_and_progress_reaches_the_sink(
    demo: BridgeServer, transport: str, version: str
) -> None:
    items: list[ProgressItem] = []
    async with await RemoteAgent.connect(
        demo.base_url, transport=transport, version=version
    ) as agent:
        assert agent.trpc_dialect
        without = [e async for e in agent.run(AgentRequest(text=PROMPT))]
        with_progress = [
            e async for e in agent.run(AgentRequest(text=PROMPT), progress=items.append)
        ]
    assert [_content(m) for m in aggregate(with_progress)] == [
        _content(m) for m in aggregate(without)
    ]
    (task_id,) = {i.task_id for i in items}
    streams = _merged(items).merger(task_id).streams()
    assert streams[""].text == THINKING  # the answer is not progress
    assert streams["call_001"].status == "done"


@pytest.mark.parametrize(("transport", "version"), WIRES, ids=IDS)
async def test_plain_caller_gets_progress_as_reasoning_and_tool_events(
    demo: BridgeServer, transport: str, version: str
) -> None:
    async with await RemoteAgent.connect(
        demo.base_url, transport=transport, version=version, trpc_dialect=False, progress=True
    ) as agent:
        events = [e async for e in agent.run(AgentRequest(text=PROMPT))]
    messages = [_content(m) for m in aggregate(events)]
    reasoning = "".join(m["reasoning"] for m in messages)
    assert reasoning == THINKING  # progress becomes reasoning; the answer is the answer
    calls = [c for m in messages for c in m["calls"]]
    results = [r for m in messages for r in m["results"]]
    assert calls == [("call_001", "get_weather", "{}")]
    assert results == [("call_001", "get_weather", "")]
    assert [m["text"] for m in messages if m["text"]] == [ANSWER]  # the terminal answer


async def _connect(server: BridgeServer, transport: str, version: str) -> RemoteAgent:
    return await RemoteAgent.connect(server.base_url, transport=transport, version=version)


def _gated_agent(gate: asyncio.Event) -> FunctionAgent:
    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        thinking = new_response_id()
        for word in ("Let ", "me ", "look."):
            yield AgentEvent.reasoning_delta(word, thinking)
        yield AgentEvent.tool_call("lookup", {"q": "x"}, call_id="call_1", response_id=thinking)
        await gate.wait()
        yield AgentEvent.tool_result("call_1", "lookup", "found")
        answer = new_response_id()
        yield AgentEvent.text_delta("Done.", answer)
        yield AgentEvent.final_text("Done.", answer)

    return FunctionAgent(name="gated", description="waits for a gate", fn=run)


@pytest.mark.parametrize(("transport", "version"), WIRES, ids=IDS)
async def test_resubscribe_and_tasks_get_merge_the_same_progress(
    transport: str, version: str
) -> None:
    gate, running = asyncio.Event(), asyncio.Event()
    first: list[ProgressItem] = []
    second: list[ProgressItem] = []

    def first_sink(item: ProgressItem) -> None:
        first.append(item)
        if item.envelope.stream_key == "call_1":
            running.set()

    def second_sink(item: ProgressItem) -> None:
        second.append(item)
        gate.set()  # subscribed (the snapshot came): let the run finish

    request = AgentRequest(text="go", user_id="alice")
    async with (
        BridgeServer(_gated_agent(gate)) as server,
        await _connect(server, transport, version) as one,
        await _connect(server, transport, version) as two,
    ):

        async def run_first() -> list[AgentEvent]:
            return [e async for e in one.run(request, progress=first_sink)]

        first_run = asyncio.create_task(run_first())
        await asyncio.wait_for(running.wait(), 30)
        task_id = first[-1].task_id
        followed = [e async for e in two.follow(task_id, request=request, progress=second_sink)]
        events = await first_run
        replay = await two.task_progress(task_id, user_id="alice")
    merged_first = _merged(first).merger(task_id)
    merged_second = _merged(second).merger(task_id)
    assert merged_second.blocks == merged_first.blocks
    assert replay.blocks == merged_first.blocks
    assert merged_first.streams()["call_1"].status == "done"
    for run_events in (events, followed):
        assert [m.text for m in aggregate(run_events) if m.text][-1] == "Done."


@pytest.mark.parametrize(("transport", "version"), WIRES, ids=IDS)
async def test_return_immediately_then_follow(transport: str, version: str) -> None:
    gate = asyncio.Event()
    followed: list[ProgressItem] = []

    def sink(item: ProgressItem) -> None:
        followed.append(item)
        gate.set()  # subscribed: let the run finish

    request = AgentRequest(text="go", user_id="alice")
    async with (
        BridgeServer(_gated_agent(gate)) as server,
        await _connect(server, transport, version) as agent,
    ):
        task_id = await agent.start(request, progress=True)
        events = [e async for e in agent.follow(task_id, request=request, progress=sink)]
        replay = await agent.task_progress(task_id, user_id="alice")
    merged = _merged(followed).merger(task_id)
    assert [b.kind for b in merged.blocks] == ["thinking"] * 3 + ["tool_call"] * 2
    assert merged.streams()["call_1"].status == "done"
    assert replay.blocks == merged.blocks
    assert [m.text for m in aggregate(events) if m.text][-1] == "Done."
