"""Agent events → A2A, as trpc-agent-go's server writes them (``docs/specs/trpc-interaction.md``
§2).

Pure functions over a2a-sdk protobuf types: one agent event becomes a list of parts plus
message-level metadata (:func:`encode_event`); the runtime wraps that into a streaming
artifact update (:func:`artifact_update`) or collects it for a unary answer
(:func:`pack_unary`). Stream framing (``submitted`` … final ``lastChunk`` artifact …
``completed``) and structured errors have their own constructors.

Deliberate deviations from trpc-agent-go's v0 server (also listed in docs/serving.md):

- **Text next to tool calls is kept.** trpc drops the ``content`` / ``reasoning_content``
  an LLM produces alongside tool calls (§2.3, §7.3), although its own client reads text
  next to tool calls (§4.4 rule 3). The bridge writes it as TextParts (reasoning with
  thought metadata first) *before* the function_call DataParts of the same artifact.
- **Response metadata is also on ``Artifact.metadata``** (as trpc's v1 server does), so
  non-streaming results and ``tasks/get`` — where the SDK keeps no event-level metadata —
  still carry ``object_type`` / ``tag`` / ``llm_response_id`` / ``state_delta``.
- **``append``** is set the way A2A means it (trpc v0 never sets it, v1 sets it after the
  first sighting): ``true`` for a partial event whose artifact id was already sent,
  ``false`` otherwise — so the full text trpc re-sends after its chunks *replaces* the
  chunks instead of being appended to them.
- **Metadata-only frames carry ``"parts": []``**, not ``null``: pydantic 0.3 clients
  reject ``null``; Go reads both.
- **Multimodal content parts** of text events are forwarded as file parts with
  ``content_type`` metadata (trpc v1 behaviour; v0 drops them).
"""

from __future__ import annotations

import fnmatch
import functools
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
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
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp

from trpc_bridge.codecs.a2a.proto_struct import fill_struct
from trpc_bridge.codecs.encoding import EncodeOptions
from trpc_bridge.codecs.trpc.keys import (
    ADK_PREFIX,
    CODE_EXECUTION_RESULT,
    DEFAULT_ERROR_TEXT,
    EXECUTABLE_CODE,
    FUNCTION_CALL,
    FUNCTION_RESPONSE,
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
    META_TAG,
    META_TASK_STATE,
    META_USAGE,
    PART_THOUGHT,
    PART_TYPE,
    STATE_LAST_RESPONSE_ID,
    encode_state_delta,
    encode_usage,
)
from trpc_bridge.codecs.trpc.request import content_part_to_a2a
from trpc_bridge.events import AgentEvent, ChatMessage, ErrorType, ObjectType, Tag
from trpc_bridge.names import new_id


@dataclass
class EncodedMessage:
    """One agent event as A2A content: its parts and message-level metadata."""

    parts: list[Part]
    metadata: dict[str, Any]
    #: The event's LLM response id: the streaming ``artifactId``.
    response_id: str
    #: The event was partial (a streamed delta).
    partial: bool = False


# --- parts ----------------------------------------------------------------------------


def _part_metadata(adk_compat: bool, key: str, value: Any) -> dict[str, Any]:
    if adk_compat:
        return {ADK_PREFIX + key: value, key: value}
    return {key: value}


def thought_metadata(options: EncodeOptions) -> dict[str, Any]:
    """The metadata of a part of thinking text (with ``adk_thought`` under adk_compat)."""
    return _part_metadata(options.adk_compat, PART_THOUGHT, True)


def _text_part(text: str, metadata: Mapping[str, Any] | None = None) -> Part:
    part = Part(text=text)
    if metadata:
        fill_struct(part.metadata, metadata)
    return part


@functools.cache
def _data_part_metadata(adk_compat: bool, data_type: str) -> Struct:
    """The metadata of a DataPart of ``data_type`` (one of a few constants), built once:
    a copy costs half a fill. Shared: read it, never change it."""
    metadata = Struct()
    fill_struct(metadata, _part_metadata(adk_compat, PART_TYPE, data_type))
    return metadata


def _data_part(options: EncodeOptions, data_type: str, data: Mapping[str, Any]) -> Part:
    part = Part()
    fill_struct(part.data.struct_value, data)
    part.metadata.CopyFrom(_data_part_metadata(options.adk_compat, data_type))
    return part


def _text_parts(
    message: ChatMessage, options: EncodeOptions, *, content_parts: bool = True
) -> list[Part]:
    """Reasoning (with thought metadata) first, then content; empty texts write nothing;
    then the content parts (unless ``content_parts`` is false)."""
    parts: list[Part] = []
    if message.reasoning_content:
        thought = thought_metadata(options)
        parts.append(_text_part(message.reasoning_content, thought))
    if message.content:
        parts.append(_text_part(message.content))
    if content_parts and message.content_parts:
        parts.extend(content_part_to_a2a(p) for p in message.content_parts)
    return parts


def _tool_parts(event: AgentEvent, options: EncodeOptions) -> list[Part]:
    parts: list[Part] = []
    first = event.choices[0].message
    if first.tool_calls:
        # Deviation: trpc drops this text; its own client would read it (§4.4 rule 3).
        parts.extend(_text_parts(first, options, content_parts=False))
        for call in first.tool_calls:
            data = {
                "args": call.function.arguments,
                "id": call.id,
                "name": call.function.name,
                "type": call.type,
            }
            parts.append(_data_part(options, FUNCTION_CALL, data))
    for msg in event.tool_results:
        data = {"id": msg.tool_id, "name": msg.tool_name}
        if msg.content:
            data["response"] = msg.content
        parts.append(_data_part(options, FUNCTION_RESPONSE, data))
    return parts


def _code_parts(event: AgentEvent, options: EncodeOptions) -> list[Part]:
    content = event.choices[0].message.content
    if not content:
        return []
    if event.has_tag(Tag.CODE_RESULT):  # the result tag wins when both are present
        return [_data_part(options, CODE_EXECUTION_RESULT, {"outcome": "", "output": content})]
    if event.has_tag(Tag.CODE):
        return [_data_part(options, EXECUTABLE_CODE, {"code": content, "language": "unknown"})]
    return []


def graph_object_allowed(object_type: str, allowlist: Iterable[str]) -> bool:
    """trpc's ``matchesAllowedGraphObjectType``: exact, ``prefix*``, ``*suffix``, ``*``."""
    return any(fnmatch.fnmatchcase(object_type, pattern) for pattern in allowlist)


def response_metadata(event: AgentEvent) -> dict[str, Any]:
    """``object_type`` / ``tag`` / ``llm_response_id`` / ``state_delta``, each only when
    non-empty (trpc's ``buildMessageMetadata``), and the bridge's ``usage`` when the
    event reports it."""
    metadata: dict[str, Any] = {}
    if event.object:
        metadata[META_OBJECT_TYPE] = event.object
    if event.tag:
        metadata[META_TAG] = event.tag
    if event.id:
        metadata[META_RESPONSE_ID] = event.id
    if event.state_delta:
        metadata[META_STATE_DELTA] = encode_state_delta(event.state_delta)
    if event.usage is not None:
        metadata[META_USAGE] = encode_usage(event.usage)
    return metadata


#: Metadata that is not content (trpc's ``hasContentfulMetadata``): the response id; and
#: usage, which rides on an event written anyway but makes none worth writing.
_NOT_CONTENT = frozenset({META_RESPONSE_ID, META_USAGE})


def _contentful(metadata: Mapping[str, Any]) -> bool:
    return not metadata.keys() <= _NOT_CONTENT  # a set comparison: a fifth of ``any()``


def encode_event(
    event: AgentEvent, options: EncodeOptions, *, streaming: bool
) -> EncodedMessage | None:
    """The parts and metadata of one non-terminal event, or ``None`` when trpc sends
    nothing for it. Terminal errors (:meth:`AgentEvent.is_terminal_error`) and the
    runner completion are the caller's: see :func:`error_metadata`, :func:`pack_unary`
    and :func:`final_artifact_update`."""
    if event.object.startswith(ObjectType.GRAPH_PREFIX) and not graph_object_allowed(
        event.object, options.graph_allowlist
    ):
        return None
    if event.is_terminal_error():
        raise ValueError("terminal error events are encoded by error_metadata()")
    metadata = response_metadata(event)
    parts: list[Part]
    if not event.choices:
        parts = []
    elif event.is_tool_event():
        parts = _tool_parts(event, options)
    elif event.object == ObjectType.CODE_EXECUTION:
        parts = _code_parts(event, options)
        if not parts:
            return None  # a code event without a code tag or content is dropped
    else:
        choice = event.choices[0]
        if streaming:
            parts = _text_parts(choice.delta, options)
            if not event.is_partial:
                # A non-partial event's full message replaces its delta when it has any.
                full = _text_parts(choice.message, options)
                parts = full or parts
        else:
            parts = _text_parts(choice.message, options)
    if not parts and not _contentful(metadata):
        return None
    return EncodedMessage(parts, metadata, event.id, event.is_partial)  # keywords cost more


_NO_ADK = EncodeOptions(adk_compat=False)


def streamed_text(
    event: AgentEvent, options: EncodeOptions
) -> tuple[str, dict[str, Any] | None] | None:
    """``(text, part metadata)`` when ``event`` is a streamed delta of answer or reasoning
    text — a partial ``chat.completion.chunk`` that :func:`encode_event` (streaming) makes
    exactly one text part — found without building it; ``None`` otherwise (and for
    anything unusual: the general path is always right, this one only faster)."""
    if (
        event.object != ObjectType.CHUNK
        or not event.is_partial
        or event.error is not None
        or event.usage is not None
        or len(event.choices) != 1
    ):
        return None
    choice = event.choices[0]
    if choice.message.tool_calls or choice.message.is_tool_result:
        return None  # a tool event: its parts come from the message
    delta = choice.delta
    if delta.content_parts or (delta.reasoning_content and delta.content):
        return None
    if delta.reasoning_content:
        return delta.reasoning_content, thought_metadata(options)
    if delta.content:
        return delta.content, None
    return None


# --- streaming envelope ---------------------------------------------------------------


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
