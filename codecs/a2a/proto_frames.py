"""a2a-sdk protobuf results (REST and gRPC) read straight into the neutral frames of
:mod:`~trpc_bridge.codecs.a2a.frames`.

The frames are exactly those :func:`~trpc_bridge.codecs.a2a.frames.read_result` makes of
the result's 1.0 JSON (``MessageToDict``), without building that JSON first: states and
roles in the 0.3 spelling, metadata as ``MessageToDict`` reads a Struct, inline file
bytes as base64 text, a part with no content skipped with a warning. One difference: a
bare ``Task`` (``GetTask``'s answer) is a task even without an id or a status, which its
JSON alone cannot say (``tests/codecs/test_proto_frames.py`` holds both to this).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable

from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf.struct_pb2 import Struct

from trpc_bridge.codecs.a2a.frames import (
    ArtifactFrame,
    Frame,
    JsonMap,
    StatusFrame,
    TaskFrame,
    WireArtifact,
    WireMessage,
    WirePart,
    normalise_state,
)
from trpc_bridge.codecs.a2a.proto_struct import struct_to_json, value_to_json
from trpc_bridge.codecs.errors import CodecError

log = logging.getLogger(__name__)

ProtoResult = (
    StreamResponse
    | SendMessageResponse
    | Task
    | Message
    | TaskStatusUpdateEvent
    | TaskArtifactUpdateEvent
)

_ROLES = {Role.ROLE_USER: "user", Role.ROLE_AGENT: "agent"}
_STATES = {value: normalise_state(name) for name, value in TaskState.items() if value}


def _metadata(
    owner: Part | Message | Artifact | Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent,
) -> JsonMap:
    struct: Struct = owner.metadata
    return struct_to_json(struct) if owner.HasField("metadata") else {}


def _part(part: Part) -> WirePart | None:
    which = part.WhichOneof("content")
    if which == "text":
        return WirePart("text", _metadata(part), text=part.text)
    if which == "data":
        return WirePart("data", _metadata(part), data=value_to_json(part.data))
    if which in ("raw", "url"):
        return WirePart(
            "file",
            _metadata(part),
            file_base64=base64.b64encode(part.raw).decode("ascii") if which == "raw" else None,
            file_uri=part.url,
            name=part.filename,
            mime_type=part.media_type,
        )
    log.warning("skipping A2A part without content")
    return None


def _parts(parts: Iterable[Part]) -> tuple[WirePart, ...]:
    read = (_part(p) for p in parts)
    return tuple(p for p in read if p is not None)


def _message(message: Message) -> WireMessage:
    return WireMessage(
        message_id=message.message_id,
        role=_ROLES.get(message.role, ""),
        parts=_parts(message.parts),
        metadata=_metadata(message),
    )


def _status(status: TaskStatus) -> tuple[str, WireMessage | None]:
    message = _message(status.message) if status.HasField("message") else None
    return _STATES.get(status.state, ""), message


def _artifact(artifact: Artifact) -> WireArtifact:
    return WireArtifact(
        artifact_id=artifact.artifact_id,
        parts=_parts(artifact.parts),
        metadata=_metadata(artifact),
    )


def _task(task: Task) -> TaskFrame:
    state, message = _status(task.status)
    return TaskFrame(
        task_id=task.id,
        context_id=task.context_id,
        state=state,
        status_message=message,
        history=tuple(_message(m) for m in task.history),
        artifacts=tuple(_artifact(a) for a in task.artifacts),
        metadata=_metadata(task),
    )


def _status_update(update: TaskStatusUpdateEvent) -> StatusFrame:
    state, message = _status(update.status)
    return StatusFrame(
        task_id=update.task_id,
        context_id=update.context_id,
        state=state,
        message=message,
        metadata=_metadata(update),
    )


def _artifact_update(update: TaskArtifactUpdateEvent) -> ArtifactFrame:
    return ArtifactFrame(
        task_id=update.task_id,
        context_id=update.context_id,
        artifact=_artifact(update.artifact),
        metadata=_metadata(update),
        last_chunk=update.last_chunk,
        append=update.append,
    )


def read_proto(result: ProtoResult) -> Frame:
    """The frame of one protobuf result. Raises :class:`CodecError` for a
    ``StreamResponse`` / ``SendMessageResponse`` that holds nothing."""
    if isinstance(result, StreamResponse | SendMessageResponse):
        which = result.WhichOneof("payload")
        if which is None:
            raise CodecError(f"empty A2A {type(result).__name__}")
        return read_proto(getattr(result, which))
    if isinstance(result, Task):
        return _task(result)
    if isinstance(result, Message):
        return _message(result)
    if isinstance(result, TaskStatusUpdateEvent):
        return _status_update(result)
    return _artifact_update(result)


__all__ = ["ProtoResult", "read_proto"]
