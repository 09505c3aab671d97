"""``RemoteAgent`` against a tfrs producer that is not a trpc agent (``tfrs_peer``, built
on a2a-sdk alone), on every transport: progress reaches the caller's sink merged, the
envelopes become reasoning and tool events, no envelope text is ever answer text, and
the answer comes from the terminal state. Also asynchronous calls: ``start``
(``return_immediately``) then ``follow`` (resubscribe), and ``task_progress``
(``tasks/get`` history)."""

from __future__ import annotations

import pytest
from tfrs_peer import ANSWER, EXPECTED_BLOCKS, EXPECTED_LOOSE, SCRIPT, tfrs_peer

from trpc_bridge.client import RemoteAgent
from trpc_bridge.codecs.tfrs import ProgressItem
from trpc_bridge.events import AgentEvent, AgentRequest, ObjectType

ENDPOINTS = [("jsonrpc", "1.0"), ("jsonrpc", "0.3"), ("rest", "1.0"), ("grpc", "1.0")]
#: The events the script's updates become, as (kind, text-or-tool): the peer speaks tfrs,
#: so its unusable envelopes and its plain working text are progress (reasoning) too.
EXPECTED_EVENTS = [
    ("reasoning", "The user asks about the weather."),
    ("call", "get_weather"),
    ("reasoning", "Checking the forecast service."),
    ("result", "get_weather"),
    ("reasoning", "from the future"),
    ("reasoning", "a broken envelope"),
    ("reasoning", "plain progress line"),
    ("reasoning", "error: cache miss"),
]
#: A task's history cannot tell plain working text from answers: it stays content there.
UNARY_EVENTS = [e for e in EXPECTED_EVENTS if e[1] != "plain progress line"]
FALLBACKS = {text for text, envelope in SCRIPT if envelope is not None}


def _view(event: AgentEvent) -> tuple[str, str] | None:
    choice = event.choices[0] if event.choices else None
    if choice is None:
        return None
    if choice.delta.reasoning_content:
        return ("reasoning", choice.delta.reasoning_content)
    if choice.message.tool_calls:
        return ("call", choice.message.tool_calls[0].function.name)
    if event.object == ObjectType.TOOL_RESPONSE:
        return ("result", choice.message.tool_name)
    return None


def _texts(events: list[AgentEvent]) -> list[str]:
    return [
        c.message.content or c.delta.content
        for e in events
        for c in e.choices
        if (c.message.content or c.delta.content) and e.object != ObjectType.TOOL_RESPONSE
    ]


def _check(events: list[AgentEvent], items: list[ProgressItem]) -> None:
    assert [v for e in events if (v := _view(e)) is not None] == EXPECTED_EVENTS
    texts = _texts(events)
    assert texts[-1] == ANSWER  # the terminal state's message
    assert not FALLBACKS & set(texts)  # no envelope's fallback became answer text
    assert "plain progress line" not in texts  # working text of a tfrs peer is progress
    assert [i.envelope.key for i in items if not i.pseudo] == EXPECTED_BLOCKS
    assert [i.text for i in items if i.pseudo] == EXPECTED_LOOSE
    assert all(not e.is_terminal_error() for e in events)


async def _run(
    transport: str, version: str, *, stream: bool
) -> tuple[list[AgentEvent], list[ProgressItem]]:
    items: list[ProgressItem] = []
    async with tfrs_peer() as peer:
        agent = await RemoteAgent.connect(peer.base_url, transport=transport, version=version)
        async with agent:
            request = AgentRequest(text="weather?", invocation_id="inv-1")
            events = [e async for e in agent.run(request, stream=stream, progress=items.append)]
    return events, items


@pytest.mark.parametrize(("transport", "version"), ENDPOINTS)
async def test_stream_gives_events_and_progress(transport: str, version: str) -> None:
    events, items = await _run(transport, version, stream=True)
    _check(events, items)
    assert {e.invocation_id for e in events} == {"inv-1"}


@pytest.mark.parametrize(("transport", "version"), ENDPOINTS)
async def test_unary_task_history_gives_the_same(transport: str, version: str) -> None:
    events, items = await _run(transport, version, stream=False)
    # A task's history holds only envelope-carrying messages as progress: no plain line.
    assert [i.text for i in items if i.pseudo] == EXPECTED_LOOSE[:2]
    assert [v for e in events if (v := _view(e)) is not None] == UNARY_EVENTS
    texts = _texts(events)
    assert texts[-1] == ANSWER and not FALLBACKS & set(texts)


@pytest.mark.parametrize(("transport", "version"), ENDPOINTS)
async def test_start_then_follow_then_task_progress(transport: str, version: str) -> None:
    items: list[ProgressItem] = []
    async with tfrs_peer(pause_after=4) as peer:
        agent = await RemoteAgent.connect(peer.base_url, transport=transport, version=version)
        async with agent:
            task_id = await agent.start(AgentRequest(text="weather?"))

            def sink(item: ProgressItem) -> None:
                items.append(item)
                peer.release()  # the subscription is up: let the rest of the turn run

            events = [e async for e in agent.follow(task_id, progress=sink)]
            replay = await agent.task_progress(task_id)
    _check(events, items)
    assert [b.key for b in replay.blocks] == EXPECTED_BLOCKS
    assert replay.streams()["call-1"].status == "done"
