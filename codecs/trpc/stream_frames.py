"""trpc's stream framing (``docs/specs/trpc-interaction.md`` §2.4–§2.5): the frames
around the encoded events — the ``submitted`` status, each event's artifact update, the
final ``lastChunk`` artifact and ``completed``, and the structured error frames — as
trpc-agent-go's server writes them. What an event encodes to is :mod:`.encode`'s."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from a2a.types import (
    Message,
    Part,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf.timestamp_pb2 import Timestamp

from trpc_bridge.codecs.a2a.proto_struct import fill_struct
from trpc_bridge.codecs.encoding import EncodeOptions
from trpc_bridge.codecs.trpc.encode import EncodedMessage
from trpc_bridge.codecs.trpc.keys import (
    DEFAULT_ERROR_TEXT,
    META_ADK_APP_NAME,
    META_ADK_SESSION_ID,
    META_ADK_USER_ID,
    META_ERROR_CODE,
    META_ERROR_MESSAGE,
    META_ERROR_PARAM,
    META_ERROR_TYPE,
    META_OBJECT_TYPE,
    META_RESPONSE_ID,
    META_STATE_DELTA,
    META_TASK_STATE,
    STATE_LAST_RESPONSE_ID,
    encode_state_delta,
)
from trpc_bridge.events import AgentEvent, ErrorType, ObjectType
from trpc_bridge.names import new_id

#: The options of a frame built without a run's (no ADK metadata).
_NO_ADK = EncodeOptions(adk_compat=False)


def stamp_now(timestamp: Timestamp) -> None:
    """``timestamp.GetCurrentTime()``: now, to the microsecond (``datetime.now`` floors
    the same clock), without its ``datetime`` round trip (a fifth of the cost)."""
    micros = time.time_ns() // 1000
    timestamp.seconds = micros // 1_000_000
    timestamp.nanos = micros % 1_000_000 * 1000


def task_status(state: TaskState, message: Message | None = None) -> TaskStatus:
    """A status stamped now."""
    status = TaskStatus(state=state)
    stamp_now(status.timestamp)
    if message is not None:
        status.message.CopyFrom(message)
    return status


def artifact_update(
    encoded: EncodedMessage, *, task_id: str, context_id: str, append: bool = False
) -> TaskArtifactUpdateEvent:
    """A streaming frame: ``artifactId`` = LLM response id, metadata on the event and
    (deviation, as trpc v1) on the artifact."""
    if not encoded.parts and not encoded.response_id and len(encoded.metadata) <= 1:
        template = _bare_template(encoded, append)
        if template is not None:
            update = TaskArtifactUpdateEvent()
            update.CopyFrom(template)
            update.task_id = task_id
            update.context_id = context_id
            return update
    return _built_update(encoded, task_id=task_id, context_id=context_id, append=append)


def _built_update(
    encoded: EncodedMessage, *, task_id: str, context_id: str, append: bool
) -> TaskArtifactUpdateEvent:
    """:func:`artifact_update`, built."""
    # Field by field, and the artifact in place: the keyword constructor costs more than
    # the three assignments, and an ``Artifact`` passed to it would be built, then copied.
    update = TaskArtifactUpdateEvent()
    update.task_id = task_id
    update.context_id = context_id
    update.append = append
    artifact = update.artifact
    artifact.artifact_id = encoded.response_id  # present even when empty (as the copy was)
    if encoded.parts:
        artifact.parts.extend(encoded.parts)
    if encoded.metadata:
        fill_struct(update.metadata, encoded.metadata)
        artifact.metadata.CopyFrom(update.metadata)  # a copy is cheaper than a rebuild
    return update


#: Updates without parts, artifact id or run ids whose metadata is one string at most, by
#: ``(append, *metadata.items())`` (see :func:`_bare_template`); cleared when full.
_BARE: dict[tuple[Any, ...], TaskArtifactUpdateEvent] = {}
_MAX_BARE = 256


def _bare_template(encoded: EncodedMessage, append: bool) -> TaskArtifactUpdateEvent | None:
    """The update :func:`artifact_update` makes of ``encoded`` (no parts, no response id,
    metadata of one entry at most) without its task and context ids, built once; ``None``
    when that entry is not a string. These are trpc's ``preprocessing.*`` frames, half a
    tool call's stream and the same on every request: a copy costs a third of a build.
    One entry only: a copied map of several may iterate in another order than the map it
    copies (and the JSON writers write a map in its order)."""
    metadata = encoded.metadata
    if metadata and type(next(iter(metadata.values()))) is not str:
        return None
    key = (append, *metadata.items())
    found = _BARE.get(key)
    if found is None:
        if len(_BARE) >= _MAX_BARE:
            _BARE.clear()
        found = _BARE[key] = _built_update(encoded, task_id="", context_id="", append=append)
    return found


def submitted_status(
    *,
    task_id: str,
    context_id: str,
    app_name: str,
    user_id: str,
    options: EncodeOptions = _NO_ADK,
) -> TaskStatusUpdateEvent:
    """The first frame of a stream; trpc's ADK compatibility adds app/session/user."""
    update = TaskStatusUpdateEvent(
        task_id=task_id,
        context_id=context_id,
        status=task_status(TaskState.TASK_STATE_SUBMITTED),
    )
    if options.adk_compat:
        update.metadata.update(
            {
                META_ADK_APP_NAME: app_name,
                META_ADK_SESSION_ID: context_id,
                META_ADK_USER_ID: user_id,
            }
        )
    return update


def completed_status(*, task_id: str, context_id: str) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=task_id, context_id=context_id, status=task_status(TaskState.TASK_STATE_COMPLETED)
    )


def _last_response_id(delta: Mapping[str, bytes | None]) -> str:
    raw = delta.get(STATE_LAST_RESPONSE_ID)
    if not raw:
        return ""
    try:
        value = json.loads(raw)
    except ValueError:
        return ""
    return value if isinstance(value, str) else ""


def final_metadata(completion: AgentEvent | None) -> dict[str, Any]:
    """trpc's ``buildFinalStreamingMetadata`` for the runner-completion event."""
    if completion is None:
        return {}
    metadata: dict[str, Any] = {}
    response_id = _last_response_id(completion.state_delta)
    if response_id:
        metadata[META_RESPONSE_ID] = response_id
    if completion.error is not None:
        # Runner-completion errors carry no task_state: the stream still completes.
        metadata.update(error_metadata(completion, with_task_state=False))
    if completion.state_delta:
        metadata[META_STATE_DELTA] = encode_state_delta(completion.state_delta)
    return metadata


def final_artifact_update(
    *,
    task_id: str,
    context_id: str,
    completion: AgentEvent | None = None,
    last_artifact_id: str = "",
) -> TaskArtifactUpdateEvent:
    """The empty ``lastChunk`` artifact that closes a trpc stream. ``last_artifact_id``
    gives trpc v1's shape (that id, ``append: true``); empty gives v0's (``""``)."""
    encoded = EncodedMessage(
        parts=[], metadata=final_metadata(completion), response_id=last_artifact_id
    )
    update = artifact_update(
        encoded, task_id=task_id, context_id=context_id, append=bool(last_artifact_id)
    )
    update.last_chunk = True
    return update


# --- errors ---------------------------------------------------------------------------


def error_task_state(event: AgentEvent) -> TaskState:
    if event.error is not None and event.error.type == ErrorType.STOP_AGENT:
        return TaskState.TASK_STATE_CANCELED
    return TaskState.TASK_STATE_FAILED


def error_metadata(event: AgentEvent, *, with_task_state: bool = True) -> dict[str, Any]:
    """Structured error metadata (trpc's ``buildTaskErrorMetadata``), empty values left out."""
    error = event.error
    metadata: dict[str, Any] = {META_OBJECT_TYPE: ObjectType.ERROR}
    if error is not None:
        for key, value in (
            (META_ERROR_TYPE, error.type),
            (META_ERROR_MESSAGE, error.message),
            (META_ERROR_CODE, error.code),
            (META_ERROR_PARAM, error.param),
        ):
            if value:
                metadata[key] = value
    if with_task_state:
        canceled = error_task_state(event) == TaskState.TASK_STATE_CANCELED
        metadata[META_TASK_STATE] = "canceled" if canceled else "failed"
        if event.id:
            metadata[META_RESPONSE_ID] = event.id
    return metadata


def error_status_message(event: AgentEvent, *, task_id: str, context_id: str) -> Message:
    """trpc's ``buildTaskErrorMessage``: the error text, with the error metadata."""
    message = Message(
        message_id=event.id or new_id("msg"),
        task_id=task_id,
        context_id=context_id,
        role=Role.ROLE_AGENT,
    )
    if event.error is not None and event.error.message:
        message.parts.append(Part(text=event.error.message))
    message.metadata.update(error_metadata(event))
    return message


def error_status(event: AgentEvent, *, task_id: str, context_id: str) -> TaskStatusUpdateEvent:
    """The final failed/canceled status of a stream that ended in a terminal error."""
    message = error_status_message(event, task_id=task_id, context_id=context_id)
    update = TaskStatusUpdateEvent(
        task_id=task_id,
        context_id=context_id,
        status=task_status(error_task_state(event), message),
    )
    update.metadata.update(error_metadata(event))
    return update


def generic_error_message(*, context_id: str) -> Message:
    """trpc's default ``ErrorHandler`` answer (structured errors off)."""
    return Message(
        message_id=new_id("msg"),
        context_id=context_id,
        role=Role.ROLE_AGENT,
        parts=[Part(text=DEFAULT_ERROR_TEXT)],
    )
