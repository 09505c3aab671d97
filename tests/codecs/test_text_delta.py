"""A stream encoder asked for :class:`TextDelta` frames produces, after
:meth:`TextDelta.to_proto`, exactly the protobuf frames of its general path (every event
through ``encode_event`` and ``artifact_update``; the text-delta shortcut that its
protobuf output also takes is switched off for the reference) — for every
golden stream vector and for generated events of every shape (deltas of answer and
reasoning text, both at once, files, tool calls and results, code, graph events, errors,
full responses, state deltas, empty ids)."""

from __future__ import annotations

import contextlib
from typing import Any
from unittest import mock

import pytest
from a2a.types import Message, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from event_strategies import agent_events
from hypothesis import given, settings
from hypothesis import strategies as st
from ordered_json import ordered_json
from test_vectors_encode import ENCODE_VECTORS, events_of, load, options_of

from trpc_bridge.codecs.a2a.json03 import StreamWriter, success_response
from trpc_bridge.codecs.a2a.text_delta import TextDelta
from trpc_bridge.codecs.encoding import (
    EncodeOptions,
    RunFrame,
    RunTarget,
    WireVersion,
    as_proto,
)
from trpc_bridge.codecs.trpc import runs as trpc_runs
from trpc_bridge.codecs.trpc.runs import StreamEncoder
from trpc_bridge.events import (
    AgentEvent,
)
from trpc_bridge.server.replicas.frames import pack, unpack
from trpc_bridge.server.tasks.task_aggregate import TaskAggregate


def _frames(
    events: list[AgentEvent],
    options: EncodeOptions,
    *,
    light: bool,
    wire: WireVersion = WireVersion.V0_3,
) -> list[Any]:
    """``light``: with TextDelta frames; else the general path for every event (the
    encoder's text-delta shortcut off), the reference."""
    encoder = StreamEncoder(RunTarget("task-1", "ctx-1", options, wire, text_deltas=light))
    frames: list[RunFrame] = [*encoder.start(app_name="a", user_id="u")]
    with contextlib.ExitStack() as stack:
        if not light:
            stack.enter_context(mock.patch.object(trpc_runs, "streamed_text", _none))
        for event in events:
            frames.extend(encoder.encode(event))
        frames.extend(encoder.close())
    return frames


def _none(*_: object) -> None:
    return None


def _comparable(frame: Any) -> Any:
    """A copy without what differs between two runs: timestamps and generated ids."""
    copy = type(frame)()
    copy.CopyFrom(frame)
    if isinstance(copy, Message):
        copy.message_id = ""
    elif isinstance(copy, TaskArtifactUpdateEvent):
        if copy.artifact.artifact_id.startswith("artifact-"):  # generated on the 1.0 wire
            copy.artifact.artifact_id = "artifact-"
    elif isinstance(copy, TaskStatusUpdateEvent):
        copy.status.ClearField("timestamp")
        copy.status.message.message_id = ""
    return copy


def _apply(aggregate: TaskAggregate, frame: RunFrame) -> None:
    """As the live task applies a frame."""
    if isinstance(frame, TextDelta):
        aggregate.apply_text(frame)
    else:
        aggregate.apply(frame)


def _same(
    events: list[AgentEvent], options: EncodeOptions, wire: WireVersion = WireVersion.V0_3
) -> list[Any]:
    """Same protobuf frames, same aggregated task, same 0.3 JSON."""
    light = _frames(events, options, light=True, wire=wire)
    plain = _frames(events, options, light=False, wire=wire)
    assert [_comparable(as_proto(f)) for f in light] == [_comparable(f) for f in plain]
    if wire is WireVersion.V1_0:
        return light
    aggregates = []
    for frames in (light, plain):
        aggregate = TaskAggregate(task_id="task-1", context_id="ctx-1", user_message=Message())
        for frame in frames:
            _apply(aggregate, frame)
        snapshot = aggregate.snapshot()
        snapshot.status.ClearField("timestamp")
        snapshot.status.message.message_id = ""
        for message in snapshot.history:
            message.message_id = ""
        aggregates.append(snapshot)
    assert aggregates[0] == aggregates[1]
    writer = StreamWriter("r-1")
    for frame in light:
        expected = success_response(as_proto(frame), "r-1")
        assert ordered_json(writer.response(frame)) == ordered_json(expected)
    return light


STREAMS = [p for p in ENCODE_VECTORS if load(p).get("kind") == "stream"]


@pytest.mark.parametrize("path", STREAMS, ids=[p.stem for p in STREAMS])
def test_vector_streams_are_the_same(path: Any) -> None:
    vector = load(path)
    _same(events_of(vector), options_of(vector))


def test_deltas_become_text_deltas() -> None:
    events = [
        AgentEvent.reasoning_delta("hm", "r1"),
        AgentEvent.text_delta("a", "r1"),
        AgentEvent.text_delta("b", "r1"),
        AgentEvent.final_text("ab", "r1"),
    ]
    frames = _same(events, EncodeOptions())
    kinds = [type(f).__name__ for f in frames]
    assert kinds[1:4] == ["TextDelta"] * 3 and kinds[4] == "TaskArtifactUpdateEvent"
    assert [f.run.append for f in frames[1:4]] == [False, True, True]
    assert frames[1].run.part_metadata == {"adk_thought": True, "thought": True}
    # One run object per shape: the next deltas of the answer share theirs.
    assert frames[3].run is frames[2].run is frames[2].run.continuation


def test_the_1_0_wire_keeps_protobuf() -> None:
    run = RunTarget("t", "c", EncodeOptions(), WireVersion.V1_0, text_deltas=True)
    frames = StreamEncoder(run).encode(AgentEvent.text_delta("a", "r1"))
    assert not any(isinstance(f, TextDelta) for f in frames)


def test_a_long_run_keeps_all_its_text() -> None:
    """The aggregate folds a long run's pieces (every 256): nothing lost or reordered."""
    pieces = [f"t{i} " for i in range(1_000)]
    events = [AgentEvent.text_delta(piece, "r1") for piece in pieces]
    frames = _same(events, EncodeOptions())
    aggregate = TaskAggregate(task_id="task-1", context_id="ctx-1", user_message=Message())
    for frame in frames:
        _apply(aggregate, frame)
    (artifact,) = aggregate.snapshot().artifacts
    assert [p.text for p in artifact.parts] == ["".join(pieces)]


def test_fan_out_packs_a_text_delta_as_its_protobuf() -> None:
    """Other replicas get protobuf frames (``bridge/server/replicas/fanout.py``)."""
    run = RunTarget("t", "c", EncodeOptions(), text_deltas=True)
    (delta,) = StreamEncoder(run).encode(AgentEvent.reasoning_delta("hm", "r1"))
    assert isinstance(delta, TextDelta)
    assert unpack(pack(as_proto(delta))) == delta.to_proto()


@settings(max_examples=400, deadline=None)
@given(
    st.lists(agent_events, max_size=8), st.booleans(), st.booleans(), st.sampled_from(WireVersion)
)
def test_generated_streams_are_the_same(
    events: list[AgentEvent], adk: bool, structured: bool, wire: WireVersion
) -> None:
    _same(events, EncodeOptions(adk_compat=adk, structured_errors=structured), wire)
