"""``codecs/a2a/proto_frames``: a protobuf result read straight into a neutral frame is
the frame the old path made of it (``MessageToDict`` to 1.0 JSON, then ``read_result``),
on generated results of every kind: stream responses, unary responses and bare tasks."""

from __future__ import annotations

import pytest
from a2a.types import (
    Message,
    Part,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from google.protobuf.json_format import MessageToDict
from hypothesis import given, settings
from hypothesis import strategies as st
from proto_strategies import ProtoFrame, frames, messages, tasks

from trpc_bridge.codecs.a2a.frames import Frame, TaskFrame, read_result
from trpc_bridge.codecs.a2a.proto_frames import ProtoResult, read_proto
from trpc_bridge.codecs.errors import CodecError


def _old(result: ProtoResult) -> Frame:
    return read_result(MessageToDict(result))


def _wrapped(frame: ProtoFrame) -> StreamResponse:
    if isinstance(frame, Task):
        return StreamResponse(task=frame)
    if isinstance(frame, Message):
        return StreamResponse(message=frame)
    if isinstance(frame, TaskStatusUpdateEvent):
        return StreamResponse(status_update=frame)
    assert isinstance(frame, TaskArtifactUpdateEvent)
    return StreamResponse(artifact_update=frame)


def _same(result: ProtoResult) -> None:
    try:
        old = _old(result)
    except ValueError:  # an infinite number in a Struct: both refuse it
        with pytest.raises(ValueError):
            read_proto(result)
        return
    assert read_proto(result) == old


@settings(max_examples=400, deadline=None)
@given(frame=frames(odd=True))
def test_stream_responses_read_as_before(frame: ProtoFrame) -> None:
    _same(_wrapped(frame))


@settings(max_examples=200, deadline=None)
@given(result=st.one_of(tasks(odd=True), messages(odd=True)))
def test_send_message_responses_read_as_before(result: Task | Message) -> None:
    wrapped = (
        SendMessageResponse(task=result)
        if isinstance(result, Task)
        else SendMessageResponse(message=result)
    )
    _same(wrapped)


@settings(max_examples=200, deadline=None)
@given(task=tasks(odd=True))
def test_a_bare_task_reads_as_before_and_is_always_a_task(task: Task) -> None:
    """``GetTask``'s answer. Its JSON says it is a task only when it has an id and a
    status; the protobuf always does."""
    frame = read_proto(task)
    assert isinstance(frame, TaskFrame)
    if task.id and task.HasField("status"):
        assert frame == _old(task)


def test_an_empty_response_is_no_result() -> None:
    for empty in (StreamResponse(), SendMessageResponse()):
        with pytest.raises(CodecError):
            _old(empty)
        with pytest.raises(CodecError):
            read_proto(empty)


def test_a_part_without_content_is_skipped() -> None:
    message = Message(message_id="m", parts=[Part(filename="f"), Part(text="")])
    frame = read_proto(StreamResponse(message=message))
    assert frame == _old(StreamResponse(message=message))
    assert [p.kind for p in frame.parts] == ["text"]  # type: ignore[union-attr]
