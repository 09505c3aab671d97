"""A packed unary answer (``codecs/a2a/packed.py``) is written as its protobuf is: the
0.3 JSON that ``json03.unary_response`` writes from what trpc's packer filled the answer
with equals the JSON it writes by reading the protobuf back (key order counts, except
inside metadata maps, whose order is a Struct's own), for every golden unary vector and
for generated runs (text, reasoning, tools, code, files, usage and state deltas in the
metadata, errors). The protobuf is the encoder's :meth:`result` but for the ids it mints.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from a2a.types import Message, Task
from event_strategies import agent_events
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import given, settings
from hypothesis import strategies as st
from ordered_json import ordered_json
from test_vectors_encode import ENCODE_VECTORS, events_of, load, options_of

from trpc_bridge.codecs.a2a.json03 import timestamp_json, unary_response
from trpc_bridge.codecs.a2a.packed import PackedResult, as_result
from trpc_bridge.codecs.encoding import EncodeOptions, RunTarget, WireVersion
from trpc_bridge.codecs.trpc.runs import UnaryEncoder
from trpc_bridge.codecs.trpc.stream_frames import stamp_now
from trpc_bridge.events import (
    AgentEvent,
)


def _encoder(events: list[AgentEvent], options: EncodeOptions, wire: WireVersion) -> UnaryEncoder:
    unary = UnaryEncoder(RunTarget("task-1", "ctx-1", options, wire))
    for event in events:
        if not unary.add(event):
            break
    return unary


def _without_ids(result: Message | Task) -> Message | Task:
    copy = type(result)()
    copy.CopyFrom(result)
    if isinstance(copy, Task):
        copy.status.ClearField("timestamp")
        copy.status.message.message_id = ""
        for message in copy.history:
            message.message_id = ""
        for artifact in copy.artifacts:
            artifact.artifact_id = ""
    else:
        copy.message_id = ""
    return copy


def _same(events: list[AgentEvent], options: EncodeOptions, wire: WireVersion) -> None:
    answer = _encoder(events, options, wire).answer(context_id="ctx-1", task_id="task-1")
    result = _encoder(events, options, wire).result(context_id="ctx-1", task_id="task-1")
    assert _without_ids(as_result(answer)) == _without_ids(result)
    for request_id in ("r-1", 7, None):
        written = unary_response(answer, request_id)
        assert ordered_json(written) == ordered_json(unary_response(as_result(answer), request_id))


UNARY = [p for p in ENCODE_VECTORS if load(p).get("kind") == "unary"]


@pytest.mark.parametrize("path", UNARY, ids=[p.stem for p in UNARY])
def test_vector_answers_are_the_same(path: Path) -> None:
    vector = load(path)
    _same(events_of(vector), options_of(vector), WireVersion.V0_3)


def test_a_plain_run_is_packed() -> None:
    events = [AgentEvent(object="preprocessing.basic"), AgentEvent.text_delta("a", "r1")]
    events.append(AgentEvent.final_text("a", "r1"))
    answer = _encoder(events, EncodeOptions(), WireVersion.V0_3).answer(context_id="c", task_id="t")
    assert isinstance(answer, PackedResult) and isinstance(answer.proto, Task)
    assert list(answer.ids[:-1]) == [m.message_id for m in answer.proto.history]
    assert answer.ids[-1] == answer.proto.artifacts[0].artifact_id


def test_the_1_0_wire_and_errors_are_not_packed() -> None:
    events = [AgentEvent.final_text("a", "r1")]
    v1 = _encoder(events, EncodeOptions(), WireVersion.V1_0)
    assert not isinstance(v1.answer(context_id="c", task_id="t"), PackedResult)
    failed = _encoder([AgentEvent.failure("boom")], EncodeOptions(), WireVersion.V0_3)
    assert not isinstance(failed.answer(context_id="c", task_id="t"), PackedResult)


@settings(max_examples=400, deadline=None)
@given(st.lists(agent_events, max_size=8), st.booleans(), st.booleans())
def test_generated_answers_are_the_same(
    events: list[AgentEvent], adk: bool, structured: bool
) -> None:
    _same(events, EncodeOptions(adk_compat=adk, structured_errors=structured), WireVersion.V0_3)


@settings(max_examples=500, deadline=None)
@given(
    seconds=st.one_of(
        st.integers(-(2**40), 2**40), st.integers(0, 253402300799), st.sampled_from([0, 1])
    ),
    nanos=st.one_of(
        st.integers(0, 999_999_999),
        st.integers(0, 999).map(lambda n: n * 1_000_000),
        st.integers(0, 999_999).map(lambda n: n * 1000),
        st.just(0),
    ),
)
def test_timestamps_are_written_as_protobuf_writes_them(seconds: int, nanos: int) -> None:
    timestamp = Timestamp(seconds=seconds, nanos=nanos)
    try:
        expected = timestamp.ToJsonString()
    except ValueError:
        with pytest.raises(ValueError):
            timestamp_json(timestamp)
        return
    assert timestamp_json(timestamp) == expected


def test_now_is_stamped_to_the_microsecond() -> None:
    ours, theirs = Timestamp(), Timestamp()
    stamp_now(ours)
    theirs.GetCurrentTime()
    assert ours.nanos % 1000 == 0
    assert 0 <= theirs.ToMicroseconds() - ours.ToMicroseconds() < 5_000_000
