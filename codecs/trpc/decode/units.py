"""Message-like units (a message, an artifact, a status) and the events built from them
(``docs/specs/trpc-interaction.md`` §4.3–§4.4): the response metadata of a unit, the error rules,
and the units of each kind of frame, shared by the unary and the stream decoder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trpc_bridge.codecs.a2a.frames import (
    FAILURE_STATES,
    TERMINAL_STATES,
    ArtifactFrame,
    JsonMap,
    StatusFrame,
    TaskFrame,
    WireMessage,
    as_str,
    merged,
    normalise_state,
)
from trpc_bridge.codecs.trpc.decode.parts import Content, DataPartMapper, parse_parts
from trpc_bridge.codecs.trpc.keys import (
    ERROR_KEYS,
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
    decode_state_delta,
    decode_usage,
)
from trpc_bridge.events import (
    AgentEvent,
    ChatMessage,
    Choice,
    ErrorType,
    ObjectType,
    ResponseError,
    Role,
    Tag,
    Usage,
)

#: The status message of a frame that has none.
NO_MESSAGE = WireMessage("", "agent", (), {})


# Meta and Unit live for one frame's decoding, and a stream builds one of each per frame:
# plain slotted dataclasses, which cost half of what frozen ones cost to build, built by
# position on the stream's paths (a class called with keywords builds a dict each time).


@dataclass(slots=True)
class Meta:
    """Response metadata of one message (§4.3 "Message metadata")."""

    object_type: str
    tag: str
    response_id: str
    state_delta: dict[str, bytes | None]
    task_state: str
    raw: JsonMap
    #: The bridge's ``usage`` key (a trpc-agent-go peer writes none).
    usage: Usage | None = None

    @classmethod
    def read(cls, metadata: JsonMap, task_state: str = "") -> Meta:
        state = task_state or normalise_state(metadata.get(META_TASK_STATE))
        return cls(
            as_str(metadata.get(META_OBJECT_TYPE)),
            as_str(metadata.get(META_TAG)),
            as_str(metadata.get(META_RESPONSE_ID)),
            decode_state_delta(metadata.get(META_STATE_DELTA)),
            state,
            metadata,
            decode_usage(metadata[META_USAGE]) if META_USAGE in metadata else None,
        )

    def error(self, fallback_text: str) -> ResponseError | None:
        """trpc's ``ResponseErrorFromMetadata``."""
        if self.object_type != ObjectType.ERROR and not _has_error_key(self.raw):
            return None
        code = as_str(self.raw.get(META_ERROR_CODE))
        param = as_str(self.raw.get(META_ERROR_PARAM))
        return ResponseError(
            type=as_str(self.raw.get(META_ERROR_TYPE)) or ErrorType.FLOW,
            message=as_str(self.raw.get(META_ERROR_MESSAGE)) or fallback_text,
            code=code or None,
            param=param or None,
        )

    def is_failure(self) -> bool:
        return self.task_state in FAILURE_STATES


def _failure_text(state: str) -> str:
    return f"remote task {state}"


def _role(role: str) -> str:
    return Role.USER if role == "user" else Role.ASSISTANT


@dataclass(slots=True)
class Unit:
    """One message-like unit to turn into an event: a message, an artifact, a status."""

    fallback_id: str
    role: str
    content: Content
    meta: Meta
    #: From a failure-state / final status or a ``lastChunk`` artifact: errors are terminal.
    terminal_frame: bool = False

    @property
    def event_id(self) -> str:
        return self.meta.response_id or self.fallback_id


class EventFactory:
    def __init__(self, invocation_id: str, author: str) -> None:
        self._invocation_id = invocation_id
        self._author = author

    def new(
        self,
        unit: Unit,
        object_type: str,
        choices: list[Choice],
        *,
        is_partial: bool = False,
        done: bool = False,
        error: ResponseError | None = None,
    ) -> AgentEvent:
        meta, content = unit.meta, unit.content
        tag = meta.tag
        if not tag and content.code is not None:
            tag = Tag.CODE  # ADK peers send code parts without trpc's tag
        elif not tag and content.code_result is not None:
            tag = Tag.CODE_RESULT
        return AgentEvent(
            id=meta.response_id or unit.fallback_id,
            object=object_type,
            choices=choices,
            is_partial=is_partial,
            done=done,
            error=error,
            tag=tag,
            state_delta=meta.state_delta,
            usage=meta.usage,
            invocation_id=self._invocation_id,
            author=self._author,
        )

    def error_event(self, unit: Unit) -> AgentEvent | None:
        """Rules 1 and 2 of §4.4: failure states and structured errors."""
        content = unit.content
        if unit.meta.is_failure():
            failure = unit.meta.error(content.text) or ResponseError(
                type=ErrorType.FLOW, message=content.text or _failure_text(unit.meta.task_state)
            )
            return self.new(unit, ObjectType.ERROR, [], done=True, error=failure)
        error = unit.meta.error(content.text)
        if error is None:
            return None
        if unit.terminal_frame:
            return self.new(unit, ObjectType.ERROR, [], done=True, error=error)
        message = ChatMessage(
            role=_role(unit.role),
            content=content.shown_text() or error.message,
            reasoning_content=content.reasoning,
        )
        object_type = unit.meta.object_type
        return self.new(
            unit,
            ObjectType.COMPLETION if object_type in ("", ObjectType.ERROR) else object_type,
            [Choice(message=message)],
            error=error,
        )


def tool_call_message(content: Content) -> ChatMessage:
    return ChatMessage(
        role=Role.ASSISTANT,
        content=content.text,
        reasoning_content=content.reasoning,
        tool_calls=content.tool_calls,
        content_parts=content.content_parts,
    )


def text_message(role: str, content: Content) -> ChatMessage:
    return ChatMessage(
        role=_role(role),
        content=content.shown_text(),
        reasoning_content=content.reasoning,
        content_parts=content.content_parts,
    )


def has_text(content: Content) -> bool:
    return bool(content.text or content.reasoning or content.content_parts)


def inferred_object(content: Content) -> str:
    if content.tool_calls:
        return ObjectType.COMPLETION
    if content.tool_responses:
        return ObjectType.TOOL_RESPONSE
    if content.code is not None or content.code_result is not None:
        return ObjectType.CODE_EXECUTION
    return ObjectType.COMPLETION


RESPONSE_KEYS = (META_OBJECT_TYPE, META_TAG, META_RESPONSE_ID, META_STATE_DELTA)


def _has_error_key(metadata: JsonMap) -> bool:
    """One of trpc's error keys holds a non-empty string."""
    for key in ERROR_KEYS:
        value = metadata.get(key)
        if value and isinstance(value, str):
            return True
    return False


def has_response_metadata(metadata: JsonMap) -> bool:
    for key in RESPONSE_KEYS:
        if metadata.get(key):
            return True
    return _has_error_key(metadata)


def message_unit(
    message: WireMessage,
    mappers: Sequence[DataPartMapper],
    *,
    extra: JsonMap | None = None,
    state: str = "",
) -> Unit:
    return Unit(
        fallback_id=message.message_id,
        role=message.role,
        content=parse_parts(message.parts, mappers),
        meta=Meta.read(merged(message.metadata, extra or {}), state),
    )


def task_units(
    task: TaskFrame,
    mappers: Sequence[DataPartMapper],
    *,
    history: bool = True,
    seen_artifacts: set[str] | None = None,
) -> list[Unit]:
    """A Task's units: its agent history (``history``: a unary result; a stream has sent
    it already), its artifacts (those not in ``seen_artifacts``, which it updates), then
    its status message: the error on a failure state, else a final status message —
    Go v0 ignores that message, a2a-sdk servers put their answers there. (Go's client
    also ignores the artifacts of a failed task; what the task made before it failed is
    still shown here, as a stream shows it.)"""
    # a2a-sdk servers keep the caller's own message in the history; it is not output.
    units = [message_unit(m, mappers) for m in task.history if m.role != "user"] if history else []
    for artifact in task.artifacts:
        if seen_artifacts is not None:
            if artifact.artifact_id in seen_artifacts:
                continue
            seen_artifacts.add(artifact.artifact_id)
        units.append(
            Unit(
                fallback_id=artifact.artifact_id,
                role="agent",
                content=parse_parts(artifact.parts, mappers),
                meta=Meta.read(merged(task.metadata, artifact.metadata)),
            )
        )
    if task.state in FAILURE_STATES:
        status = task.status_message or NO_MESSAGE
        units.append(message_unit(status, mappers, extra=task.metadata, state=task.state))
        return units
    final = task.status_message
    if final is not None and final.parts and final.role != "user":
        units.append(message_unit(final, mappers, extra=task.metadata))
    return units


def update_units(
    frame: StatusFrame | ArtifactFrame, mappers: Sequence[DataPartMapper]
) -> list[Unit]:
    if isinstance(frame, ArtifactFrame):
        return [artifact_unit(frame, mappers)]
    message = frame.message or NO_MESSAGE
    return [status_unit(frame, message, mappers)]


def artifact_unit(
    frame: ArtifactFrame, mappers: Sequence[DataPartMapper], metadata: JsonMap | None = None
) -> Unit:
    """``metadata``: the frame's :func:`merged` metadata when the caller has it already."""
    if metadata is None:
        # trpc v1: artifact metadata overlaid by the event metadata (v0 reads the event's).
        metadata = merged(frame.artifact.metadata, frame.metadata)
    artifact = frame.artifact
    return Unit(
        artifact.artifact_id,  # fallback_id
        "agent",
        parse_parts(artifact.parts, mappers),
        Meta.read(metadata),
        frame.last_chunk,  # terminal_frame
    )


def status_unit(
    frame: StatusFrame, message: WireMessage, mappers: Sequence[DataPartMapper]
) -> Unit:
    state = frame.state if frame.state in FAILURE_STATES else ""
    return Unit(
        fallback_id=message.message_id,
        role=message.role or "agent",
        content=parse_parts(message.parts, mappers),
        # Go v0 never reads status.message.metadata; v1 merges it under the outer one.
        meta=Meta.read(merged(message.metadata, frame.metadata), state),
        terminal_frame=frame.state in TERMINAL_STATES,
    )
