"""RemoteAgent against trpc-agent-go's recorded wire output, replayed byte for byte by a
real HTTP peer on loopback (tests/replay_server.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from parallel import refused_port
from replay_server import ReplayPeer, go_sse_frame, serving

from trpc_bridge.client import RemoteAgent, RemoteAgentError
from trpc_bridge.codecs.trpc.keys import DEFAULT_ERROR_TEXT
from trpc_bridge.events import AgentEvent, AgentRequest, ErrorType, ObjectType
from trpc_bridge.message_aggregate import MessageAggregator

VECTORS = Path(__file__).parent.parent / "vectors"
REQUEST = AgentRequest(
    text="What is the weather in Beijing?", context_id="sess-1", user_id="u1", invocation_id="inv-1"
)


def _vector(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VECTORS / f"{name}.json").read_text())
    return data


def _frames(results: list[dict[str, Any]]) -> list[bytes]:
    # Placeholders of the recorded vectors become concrete values, as on a real wire.
    text = json.dumps(results).replace("<ts>", "2026-01-23T10:30:00+08:00")
    return [go_sse_frame(r) for r in json.loads(text)]


async def _run(agent: RemoteAgent, request: AgentRequest = REQUEST, **kw: Any) -> list[AgentEvent]:
    return [event async for event in agent.run(request, **kw)]


async def test_go_v0_streaming_run_end_to_end() -> None:
    """C12's frames with Go's framing, plus what Go adds on a real wire: a keep-alive
    comment, a metadata-only frame with ``"parts": null``, a frame over 640 KiB, the
    final chunk with state_delta (S13) and ``completed``."""
    c12 = _vector("C12")["input"]
    big = "x" * (700 * 1024)
    null_parts = {
        "artifact": {"artifactId": "Y", "parts": None},
        "contextId": "ctx-1",
        "kind": "artifact-update",
        "lastChunk": False,
        "metadata": {"llm_response_id": "Y", "object_type": "chat.completion.chunk", "tag": "t"},
        "taskId": "task-1",
    }
    huge = dict(c12[4], artifact={"artifactId": "Y", "parts": [{"kind": "text", "text": big}]})
    s13 = _vector("S13")["expect"]
    peer = ReplayPeer(card_paths=("/.well-known/agent.json",))  # Go's legacy path only
    peer.card["url"] = "127.0.0.1:{port}/agents/weather"  # schemeless, with a base path
    chunks = [*_frames(c12[:4]), b": ping\n\n", *_frames([null_parts, huge, *c12[4:7], *s13])]
    peer.stream_chunks = chunks
    async with serving(peer) as base:
        peer.card["url"] = peer.card["url"].format(port=base.rsplit(":", 1)[1])
        async with await RemoteAgent.connect(base) as agent:
            assert agent.endpoint.url == f"{base}/agents/weather/"  # Go posts to "<base>/"
            events = await _run(agent)
    (call,) = peer.calls
    assert call.path == "/agents/weather/"
    assert call.headers["x-user-id"] == "u1" and call.headers["accept"] == "text/event-stream"
    assert "a2a-version" not in call.headers
    message = call.body["params"]["message"]
    assert call.body["method"] == "message/stream"
    assert message["contextId"] == "sess-1" and message["kind"] == "message"
    assert message["metadata"] == {
        "interaction_spec_version": "0.1",
        "invocation_id": "inv-1",
        "user_id": "u1",
    }

    folded = MessageAggregator().extend(events)
    x, tool, y, final = folded.messages
    assert (x.text, x.tool_calls[0].function.name) == ("Let me", "get_weather")
    assert tool.tool_results[0].content == '{"temp":"20°C"}'
    # The huge delta and the chunks, then the re-sent full text, which replaces them.
    assert y.text == "It is 20°C." and y.complete
    assert final.id == "resp-final"
    (last,) = [e for e in events if e.id == "resp-final"]
    assert last.state_delta == {"k": b'"v"', "last_response_id": b'"resp-final"'}
    assert all(e.author == "weather-agent" and e.invocation_id == "inv-1" for e in events)
    assert any(e.choices and e.choices[0].delta.content == big for e in events)


async def test_default_go_error_then_eof_is_reported_after_trying_tasks_get() -> None:
    """S14: Go's default error handler sends a generic text and ends the stream with no
    final state; the v0 server has deleted the task, so tasks/get cannot help."""
    peer = ReplayPeer(stream_chunks=_frames(_vector("S12")["expect"] + _vector("S14")["expect"]))
    async with serving(peer) as base, await RemoteAgent.connect(base) as agent:
        events = await _run(agent)
    assert peer.methods() == ["message/stream", "tasks/get"]
    assert peer.calls[1].body["params"] == {"id": "task-1"}
    *content, failure = events
    # A chunk, then Go's generic text: an agent Message of its own, shown whole.
    shown = [c.delta.content or c.message.content for e in content for c in e.choices]
    assert shown == ["The current", DEFAULT_ERROR_TEXT]
    assert failure.error is not None and failure.error.type == ErrorType.RUN
    assert "ended before task task-1 reached an end state" in failure.error.message


async def test_structured_failure_ends_the_run() -> None:
    peer = ReplayPeer(stream_chunks=_frames(_vector("S12")["expect"] + _vector("S15")["expect"]))
    async with serving(peer) as base, await RemoteAgent.connect(base) as agent:
        (event,) = await _run(agent)
    assert event.is_terminal_error() and event.id == "resp-1"
    assert event.error is not None
    assert (event.error.type, event.error.message, event.error.code) == (
        "flow_error",
        "task failed",
        "A2A_500",
    )
    assert peer.methods() == ["message/stream"]


async def test_message_mode_stream_keeps_every_message() -> None:
    """trpc's StreamingEventTypeMessage: one ``message`` frame per event (a2a-sdk's client
    stops after the first)."""
    messages = [
        {
            "contextId": "ctx-1",
            "kind": "message",
            "messageId": "chatcmpl-1",
            "metadata": {"llm_response_id": "chatcmpl-1", "object_type": "chat.completion.chunk"},
            "parts": [{"kind": "text", "text": piece}],
            "role": "agent",
            "taskId": "task-1",
        }
        for piece in ("one ", "two ", "three")
    ]
    peer = ReplayPeer(stream_chunks=_frames(messages))
    async with serving(peer) as base, await RemoteAgent.connect(base) as agent:
        events = await _run(agent)
    assert MessageAggregator().extend(events).text == "one two three"


async def test_consumer_going_away_cancels_the_remote_task() -> None:
    peer = ReplayPeer(stream_chunks=_frames(_vector("S12")["expect"] + _vector("S01")["expect"]))
    peer.hang = True
    async with serving(peer) as base, await RemoteAgent.connect(base) as agent:
        events = agent.run(REQUEST)
        first = await anext(events)
        await events.aclose()  # type: ignore[attr-defined]
        assert first.choices[0].delta.content == "The current"
        assert peer.cancelled.is_set()
    assert peer.methods() == ["message/stream", "tasks/cancel"]
    assert peer.calls[1].body["params"] == {"id": "task-1"}


async def test_unary_task_decodes_like_c11() -> None:
    peer = ReplayPeer(send_result=_vector("C11")["input"])
    async with serving(peer) as base, await RemoteAgent.connect(base, stream=False) as agent:
        events = await _run(agent)
    assert peer.methods() == ["message/send"]
    assert peer.calls[0].headers["accept"] == "application/json"
    assert [(e.id, e.object, e.done) for e in events] == [
        ("chatcmpl-1", ObjectType.COMPLETION, False),
        ("msg-B", ObjectType.TOOL_RESPONSE, False),
        ("chatcmpl-2", ObjectType.COMPLETION, True),
    ]


async def test_plain_a2a_peer_gets_no_trpc_version_and_its_card_decides_streaming() -> None:
    peer = ReplayPeer(
        send_result={
            "kind": "message",
            "messageId": "m",
            "role": "agent",
            "parts": [{"kind": "text", "text": "hi"}],
        }
    )
    peer.card["protocolVersion"] = "0.2.5"
    peer.card["capabilities"] = {"streaming": False}
    async with serving(peer) as base, await RemoteAgent.connect(base) as agent:
        (event,) = await _run(agent)
    assert event.choices[0].message.content == "hi" and event.done
    assert peer.methods() == ["message/send"]
    assert "interaction_spec_version" not in peer.calls[0].body["params"]["message"]["metadata"]
    # …unless the caller forces the trpc dialect.
    peer.card["url"] = ""
    async with serving(peer) as base, await RemoteAgent.connect(base, trpc_dialect=True) as agent:
        await _run(agent)
    assert peer.calls[-1].body["params"]["message"]["metadata"]["interaction_spec_version"] == "0.1"


async def test_jsonrpc_error_instead_of_a_stream_is_a_run_error() -> None:
    peer = ReplayPeer(
        stream_json={
            "jsonrpc": "2.0",
            "id": "x",
            "error": {"code": -32602, "message": "bad params"},
        }
    )
    async with serving(peer) as base, await RemoteAgent.connect(base) as agent:
        (event,) = await _run(agent)
    assert event.error is not None and event.error.type == ErrorType.RUN
    assert "-32602 bad params" in event.error.message


async def test_unreachable_agent_and_missing_card_raise() -> None:
    peer = ReplayPeer(card_paths=())
    async with serving(peer) as base:
        with pytest.raises(RemoteAgentError, match="no agent card"):
            await RemoteAgent.connect(base)
    # Not the closed server's port again: a parallel test may have been given it since.
    with refused_port() as port, pytest.raises(RemoteAgentError, match="cannot reach"):
        await RemoteAgent.connect(f"http://127.0.0.1:{port}/")
