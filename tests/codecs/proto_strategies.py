"""Hypothesis strategies for a2a-sdk's 1.0 protobuf results: parts, messages, statuses,
artifacts, tasks and stream frames with any field set or not, Struct metadata holding any
JSON value. ``odd=True`` adds what only a lenient reader has to survive: parts without
content, DataParts whose value is not an object (or unset), messages without a role."""

from __future__ import annotations

from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from hypothesis import strategies as st

ProtoFrame = TaskStatusUpdateEvent | TaskArtifactUpdateEvent | Message | Task

text = st.text(max_size=12)
_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(2**53), max_value=2**53),
    text,
)
json_values = st.recursive(
    _json_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=8,
)
_metadata = st.one_of(st.none(), st.dictionaries(text, json_values, max_size=4))


@st.composite
def parts(draw: st.DrawFn, odd: bool = False) -> Part:
    part = Part()
    kinds = ["text", "data", "raw", "url"] + (["none", "value", "unset"] if odd else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "text":
        part.text = draw(text)
    elif kind == "data":
        part.data.struct_value.update(draw(st.dictionaries(text, json_values, max_size=4)))
    elif kind == "value":  # a list, a number, a string, null: wrapped by 0.3 writers
        part.data.list_value.extend([draw(json_values)])
    elif kind == "unset":
        part.data.SetInParent()
    elif kind == "raw":
        part.raw = draw(st.binary(max_size=12))
    elif kind == "url":
        part.url = draw(text)
    if kind in ("raw", "url", "none"):
        part.media_type = draw(text)
        part.filename = draw(text)
    metadata = draw(_metadata)
    if metadata is not None:
        part.metadata.update(metadata)
    return part


@st.composite
def messages(draw: st.DrawFn, odd: bool = False) -> Message:
    roles = [Role.ROLE_USER, Role.ROLE_AGENT] + ([Role.ROLE_UNSPECIFIED] if odd else [])
    message = Message(
        message_id=draw(text),
        context_id=draw(text),
        task_id=draw(text),
        role=draw(st.sampled_from(roles)),
        parts=draw(st.lists(parts(odd), max_size=3)),
        extensions=draw(st.lists(text, max_size=2)),
        reference_task_ids=draw(st.lists(text, max_size=2)),
    )
    metadata = draw(_metadata)
    if metadata is not None:
        message.metadata.update(metadata)
    return message


@st.composite
def statuses(draw: st.DrawFn, odd: bool = False) -> TaskStatus:
    status = TaskStatus(state=draw(st.sampled_from(TaskState.values())))
    if draw(st.booleans()):
        status.timestamp.FromNanoseconds(draw(st.integers(0, 4_000_000_000 * 10**9)))
    if draw(st.booleans()):
        status.message.CopyFrom(draw(messages(odd)))
    return status


@st.composite
def artifacts(draw: st.DrawFn, odd: bool = False) -> Artifact:
    artifact = Artifact(
        artifact_id=draw(text),
        name=draw(text),
        description=draw(text),
        parts=draw(st.lists(parts(odd), max_size=3)),
        extensions=draw(st.lists(text, max_size=2)),
    )
    metadata = draw(_metadata)
    if metadata is not None:
        artifact.metadata.update(metadata)
    return artifact


@st.composite
def tasks(draw: st.DrawFn, odd: bool = False) -> Task:
    task = Task(
        id=draw(text),
        context_id=draw(text),
        history=draw(st.lists(messages(odd), max_size=2)),
        artifacts=draw(st.lists(artifacts(odd), max_size=2)),
    )
    if draw(st.booleans()):
        task.status.CopyFrom(draw(statuses(odd)))
    metadata = draw(_metadata)
    if metadata is not None:
        task.metadata.update(metadata)
    return task


@st.composite
def frames(draw: st.DrawFn, odd: bool = False) -> ProtoFrame:
    kind = draw(st.sampled_from(["artifact", "status", "message", "task"]))
    frame: ProtoFrame
    if kind == "artifact":
        frame = TaskArtifactUpdateEvent(
            task_id=draw(text),
            context_id=draw(text),
            artifact=draw(artifacts(odd)),
            append=draw(st.booleans()),
            last_chunk=draw(st.booleans()),
        )
    elif kind == "status":
        frame = TaskStatusUpdateEvent(task_id=draw(text), context_id=draw(text))
        if draw(st.booleans()):
            frame.status.CopyFrom(draw(statuses(odd)))
    elif kind == "message":
        return draw(messages(odd))
    else:
        return draw(tasks(odd))
    metadata = draw(_metadata)
    if metadata is not None:
        frame.metadata.update(metadata)
    return frame
