"""Plain A2A encoding of what trpc's event model lacks: task states set by the agent
(``AgentEvent.task_status``), file and data parts, and direct reply vs task."""

from __future__ import annotations

from a2a.types import TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from google.protobuf.json_format import MessageToDict
from hypothesis import given
from hypothesis import strategies as st

from trpc_bridge.codecs.dialects.plain import PlainStreamEncoder, PlainUnaryEncoder
from trpc_bridge.codecs.encoding import RunTarget, WireVersion
from trpc_bridge.events import (
    AgentEvent,
    ChatMessage,
    Choice,
    ContentPart,
    ObjectType,
    TaskStateLiteral,
    TaskStateName,
)

RUN = RunTarget(task_id="task-1", context_id="ctx-1", wire=WireVersion.V1_0)


def _content(*parts: ContentPart) -> AgentEvent:
    message = ChatMessage(role="assistant", content_parts=list(parts))
    return AgentEvent(id="r1", object=ObjectType.COMPLETION, choices=[Choice(message=message)])


def test_interrupted_state_ends_the_run_with_its_message() -> None:
    encoder = PlainStreamEncoder(RUN)
    (frame,) = encoder.encode(AgentEvent.task_status(TaskStateName.INPUT_REQUIRED, "Your name?"))
    assert isinstance(frame, TaskStatusUpdateEvent)
    assert frame.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert frame.status.message.parts[0].text == "Your name?"
    assert encoder.done and encoder.close() == []  # no "completed" after it
    assert encoder.direct_reply() is None  # a unary caller gets the task


def test_working_reports_progress_and_the_run_goes_on() -> None:
    encoder = PlainStreamEncoder(RUN)
    (frame,) = encoder.encode(AgentEvent.task_status(TaskStateName.WORKING))
    assert isinstance(frame, TaskStatusUpdateEvent)
    assert frame.status.state == TaskState.TASK_STATE_WORKING
    assert not frame.status.HasField("message")
    assert not encoder.done
    (end,) = encoder.close()
    assert isinstance(end, TaskStatusUpdateEvent)
    assert end.status.state == TaskState.TASK_STATE_COMPLETED


def test_file_and_data_parts_become_artifact_parts() -> None:
    encoder = PlainStreamEncoder(RUN)
    file = ContentPart(type="file", data=b"tck", name="output.txt", mime_type="text/plain")
    data = ContentPart(type="data", value={"key": "value", "count": 42})
    (first,) = encoder.encode(_content(file))
    (second,) = encoder.encode(_content(data))
    assert isinstance(first, TaskArtifactUpdateEvent)
    assert isinstance(second, TaskArtifactUpdateEvent)
    assert MessageToDict(first.artifact) == {
        "artifactId": "r1",
        "parts": [{"raw": "dGNr", "filename": "output.txt", "mediaType": "text/plain"}],
    }
    assert (first.append, second.append) == (False, True)  # same response: one artifact
    assert MessageToDict(second.artifact.parts[0]) == {"data": {"key": "value", "count": 42.0}}


def test_answer_text_alone_is_a_direct_reply() -> None:
    unary = PlainUnaryEncoder(RUN)
    unary.add(AgentEvent.text_delta("Hel", "r1"))
    unary.add(AgentEvent.text_delta("lo", "r1"))
    unary.add(AgentEvent.final_text("Hello", "r1"))
    reply = unary.result(context_id="ctx-1", task_id="task-1")
    assert reply is not None and reply.parts[0].text == "Hello"


@given(
    st.sampled_from(["input-required", "auth-required", "completed", "rejected"]),
    st.text(max_size=20),
)
def test_every_final_state_ends_the_stream_once(state: TaskStateLiteral, text: str) -> None:
    encoder = PlainStreamEncoder(RUN)
    frames = encoder.encode(AgentEvent.task_status(state, text))
    frames += encoder.encode(AgentEvent.final_text("late", "r2"))  # after the end: dropped
    frames += encoder.close()
    assert len(frames) == 1
    (frame,) = frames
    assert isinstance(frame, TaskStatusUpdateEvent)
    if text:
        assert [p.text for p in frame.status.message.parts] == [text]
    else:  # nothing to say: no status message at all
        assert not frame.status.HasField("message")
