"""Bare updates (trpc's ``preprocessing.*`` frames) skip the event path only where that is
exact: what the decoder names with ``bare_type`` would have decoded to one event without
content, and absorbing it leaves the decoder as decoding it would have; what the encoder
gives with ``bare`` is what encoding that event gives, its state the same after.

Each property runs one stream twice: once through the event path (every result fed,
every event encoded), once taking the bare path wherever it is offered; the answers must
be the same, result by result.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from a2a.types import TaskStatusUpdateEvent
from hypothesis import given, settings
from hypothesis import strategies as st

from trpc_bridge.codecs.a2a.json03 import StreamWriter, success_response
from trpc_bridge.codecs.dialects.decode import DialectStreamDecoder
from trpc_bridge.codecs.encoding import EncodeOptions, RunTarget
from trpc_bridge.codecs.errors import CodecError
from trpc_bridge.codecs.trpc.decode import StreamDecoder
from trpc_bridge.codecs.trpc.decode.stream import bare_update_type
from trpc_bridge.codecs.trpc.runs import StreamEncoder
from trpc_bridge.events import AgentEvent, ObjectType

ROOT = Path(__file__).resolve().parents[2]
GO_TOOL = ROOT / "interop" / "go" / "testdata" / "sse_v0" / "tool.sse"

_TASK = st.sampled_from(["task-up", "task-up", "task-other", ""])
_IDS = st.sampled_from(["chatcmpl-1", "chatcmpl-2", ""])
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=4)
_KINDS = st.sampled_from(["preprocessing.basic", "preprocessing.content", "preprocessing.x"])


def _update(
    artifact: dict[str, Any], metadata: dict[str, Any] | None, task: str = "task-up", **extra: Any
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "artifact": artifact,
        "contextId": "ctx-up",
        "kind": "artifact-update",
        "lastChunk": False,
        "taskId": task,
        **extra,
    }
    if metadata is not None:
        result["metadata"] = metadata
    return result


@st.composite
def _bare_like(draw: st.DrawFn) -> dict[str, Any]:
    """trpc's bare update, or one that differs from it in one way."""
    kind = draw(_KINDS)
    result = _update({"artifactId": "", "parts": draw(st.sampled_from([None, []]))}, None)
    result["metadata"] = {"object_type": kind}
    result["taskId"] = draw(_TASK)
    change = draw(
        st.sampled_from(
            [None, None, None, "last", "append", "parts", "id", "meta", "art_meta", "no_parts"]
        )
    )
    if change == "last":
        result["lastChunk"] = True
    elif change == "append":
        result["append"] = True
    elif change == "parts":
        result["artifact"]["parts"] = [{"kind": "text", "text": "x"}]
    elif change == "id":
        result["artifact"]["artifactId"] = "a1"
    elif change == "meta":
        result["metadata"]["tag"] = "t"
    elif change == "art_meta":
        result["artifact"]["metadata"] = {"object_type": kind}
    elif change == "no_parts":
        del result["artifact"]["parts"]
    return result


@st.composite
def _frame(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["bare", "bare", "delta", "completion", "plain", "status", "task"]))
    response_id = draw(_IDS)
    meta: dict[str, Any] = {"llm_response_id": response_id} if response_id else {}
    if kind == "bare":
        return draw(_bare_like())
    if kind == "delta":
        part = {"kind": "text", "text": draw(_TEXT)}
        return _update(
            {"artifactId": response_id, "parts": [part]},
            {**meta, "object_type": ObjectType.CHUNK},
        )
    if kind == "completion":
        part = {"kind": "text", "text": draw(_TEXT)}
        return _update(
            {"artifactId": response_id, "parts": [part]},
            {**meta, "object_type": ObjectType.COMPLETION},
        )
    if kind == "plain":  # another dialect's artifact: its text may stay open in pieces
        part = {"kind": "text", "text": draw(_TEXT)}
        return _update({"artifactId": "a1", "parts": [part]}, None, append=draw(st.booleans()))
    if kind == "task":  # a snapshot: its artifacts not streamed before are shown
        artifact_id = draw(st.sampled_from(["", "a2", response_id]))
        return {
            "artifacts": [{"artifactId": artifact_id, "parts": [{"kind": "text", "text": "t"}]}],
            "contextId": "ctx-up",
            "id": draw(_TASK),
            "kind": "task",
            "status": {"state": "working"},
        }
    state = draw(st.sampled_from(["submitted", "working", "input-required", "completed"]))
    return {
        "contextId": "ctx-up",
        "final": state == "completed",
        "kind": "status-update",
        "status": {"state": state, "timestamp": "2026-01-01T00:00:00Z"},
        "taskId": draw(_TASK),
    }


_STREAMS = st.lists(_frame(), max_size=16)


def _same(event: AgentEvent) -> AgentEvent:
    """``event`` without what each decode mints anew (its event id and timestamp)."""
    return dataclasses.replace(event, event_id="", timestamp=0.0)


def _feed(decoder: StreamDecoder, result: Any) -> list[AgentEvent]:
    try:
        return decoder.feed(result)
    except CodecError:
        return []


def _decoded_both_ways(
    results: list[Any], make: type[StreamDecoder]
) -> tuple[list[list[AgentEvent]], int]:
    """The events of each result on the event path, checked against the bare path; and
    how many results the bare path took."""
    full, bare = make(), make()
    out: list[list[AgentEvent]] = []
    taken = 0
    for result in results:
        events = _feed(full, result)
        out.append(events)
        object_type = bare.bare_type(result)
        if object_type is None:
            assert [_same(e) for e in _feed(bare, result)] == [_same(e) for e in events]
            continue
        taken += 1
        assert bare_update_type(result) == object_type
        assert len(events) == 1, events
        (event,) = events
        assert event.object == object_type and event.is_partial and not event.done
        assert (event.id, event.tag, event.error, event.usage) == ("", "", None, None)
        assert not event.state_delta
        assert len(event.choices) == 1
        assert event.choices[0].delta.content == "" == event.choices[0].message.content
        bare.absorb_bare()
    return out, taken


@settings(max_examples=300, deadline=None)
@given(_STREAMS)
def test_a_dialect_decoder_absorbs_what_it_names(results: list[Any]) -> None:
    _decoded_both_ways(results, DialectStreamDecoder)


@settings(max_examples=200, deadline=None)
@given(_STREAMS)
def test_trpc_decoder_absorbs_what_it_names(results: list[Any]) -> None:
    _decoded_both_ways(results, StreamDecoder)


def _normalised(frames: list[Any]) -> list[bytes]:
    out = []
    for frame in frames:
        if isinstance(frame, TaskStatusUpdateEvent):
            frame.status.ClearField("timestamp")
        out.append(frame.SerializeToString(deterministic=True))
    return out


@settings(max_examples=200, deadline=None)
@given(_STREAMS, st.booleans(), st.booleans())
def test_encoder_bare_is_the_event_encoded(
    results: list[Any], adk_compat: bool, structured: bool
) -> None:
    decoded, _ = _decoded_both_ways(results, DialectStreamDecoder)
    options = EncodeOptions(adk_compat=adk_compat, structured_errors=structured)
    full = StreamEncoder(RunTarget("task-1", "ctx-1", options))
    bare = StreamEncoder(RunTarget("task-1", "ctx-1", options))
    # The 0.3 writer keeps the bytes of a frame it wrote: the bare path publishes one
    # object for every repeat of a type, the event path a new one each time.
    full_writer, bare_writer = StreamWriter(7), StreamWriter(7)
    for events in decoded:
        for event in events:
            encoded = full.encode(event)
            frames = _normalised(encoded)
            candidate = _is_bare_event(event)
            made = bare.bare(event.object) if candidate else None
            if made is None:
                assert _normalised(bare.encode(event)) == frames
            else:
                assert _normalised([made]) == frames
                (expected,) = encoded
                assert bare_writer.response(made) == full_writer.response(expected)
                assert bare_writer.response(made) == success_response(made, 7)
            assert (bare.done, bare._seen, bare._last_id) == (full.done, full._seen, full._last_id)
    assert _normalised(bare.close()) == _normalised(full.close())


def _is_bare_event(event: AgentEvent) -> bool:
    """An event as the decoder makes of a bare update (what ``bare`` stands for)."""
    return (
        event.is_partial
        and not (event.id or event.tag or event.error or event.usage or event.state_delta)
        and len(event.choices) == 1
        and not event.choices[0].delta.content
        and not event.choices[0].delta.reasoning_content
        and not event.choices[0].message.content
        and event.object.startswith("preprocessing.")
    )


def test_go_tool_stream_takes_its_preprocessing_frames() -> None:
    """trpc-agent-go's tool call: its eight ``preprocessing.*`` frames take the bare
    path (the task's first status came before them)."""
    results = [
        json.loads(line[5:])["result"]
        for line in GO_TOOL.read_bytes().splitlines()
        if line.startswith(b"data:")
    ]
    kinds = [bare_update_type(r) for r in results]
    assert sum(k is not None for k in kinds) == 8
    _, taken = _decoded_both_ways(results, DialectStreamDecoder)
    assert taken == 8
    # One update per type and run: its two LLM calls' four types are four objects.
    encoder = StreamEncoder(RunTarget("task-1", "ctx-1", EncodeOptions()))
    made = [encoder.bare(k) for k in kinds if k is not None]
    assert len({id(frame) for frame in made}) == 4


def test_open_pieces_are_completed_by_the_event_path() -> None:
    """Another dialect's text still open in pieces: the next unit (a bare update too)
    completes it, so the bare update is decoded."""
    preprocessing = {"object_type": "preprocessing.basic"}
    bare = _update({"artifactId": "", "parts": None}, preprocessing)
    text = _update({"artifactId": "a1", "parts": [{"kind": "text", "text": "hel"}]}, None)
    more = {**text, "append": True}
    decoder = DialectStreamDecoder()
    for result in (bare, text, more):
        decoder.feed(result)
    assert decoder.bare_type(bare) is None
    _, taken = _decoded_both_ways([bare, bare, text, more, bare, bare], DialectStreamDecoder)
    assert taken == 2  # the second, and the one after the pieces were completed


def test_a_task_after_a_bare_update_knows_its_artifact() -> None:
    """The unnamed artifact a bare update showed is not shown again by a task snapshot."""
    working = {
        "contextId": "ctx-up",
        "final": False,
        "kind": "status-update",
        "status": {"state": "working"},
        "taskId": "task-up",
    }
    bare = _update({"artifactId": "", "parts": None}, {"object_type": "preprocessing.basic"})
    task = {
        "artifacts": [{"artifactId": "", "parts": [{"kind": "text", "text": "t"}]}],
        "contextId": "ctx-up",
        "id": "task-up",
        "kind": "task",
        "status": {"state": "completed"},
    }
    for make in (StreamDecoder, DialectStreamDecoder):
        decoded, taken = _decoded_both_ways([working, bare, task], make)
        assert taken == 1 and decoded[2] == []


def test_the_shape_is_strict() -> None:
    bare = _update({"artifactId": "", "parts": None}, {"object_type": "preprocessing.basic"})
    assert bare_update_type(bare) == "preprocessing.basic"
    assert bare_update_type({**bare, "final": False}) is None  # a key it does not know
    assert bare_update_type({**bare, "metadata": {"object_type": "chat.completion"}}) is None
    assert bare_update_type({**bare, "metadata": {"object_type": 1}}) is None
    assert bare_update_type({**bare, "lastChunk": 0}) is None
    assert bare_update_type({**bare, "taskId": None}) is None
    assert bare_update_type({**bare, "artifact": {"artifactId": "", "parts": {}}}) is None
    assert bare_update_type([bare]) is None
