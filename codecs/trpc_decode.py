"""A2A results → :class:`AgentEvent`: what trpc-agent-go's ``A2AAgent`` reads, plus what
it loses (reference §4).

Two entry points:

- :func:`decode_result` — a unary ``message/send`` / ``SendMessage`` result (a Message or
  a Task), decoded as trpc's ``ConvertToEvents`` does (§4.4, vector C11): one event per
  agent history message, then one per artifact, the last one ``done``.
- :class:`StreamDecoder` — one object per stream; :meth:`StreamDecoder.feed` turns each
  streamed result into zero or more events (§4.2–§4.4).

Both shapes of the wire are read (see :mod:`trpc_bridge.codecs.a2a_frames`). Where the Go
v0 client loses information, this decoder keeps it; each place says so with "Go v0:".
The one rule consumers need: a non-partial event carries the *complete* ``message`` of
its response id, and deltas seen before it under that id are its pieces — never add both.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from a2a.types import StreamResponse

from trpc_bridge.codecs.a2a_frames import (
    FAILURE_STATES,
    TERMINAL_STATES,
    ArtifactFrame,
    Frame,
    JsonMap,
    StatusFrame,
    TaskFrame,
    WireMessage,
    WirePart,
    as_map,
    as_str,
    normalise_state,
    proto_to_json,
    read_result,
)
from trpc_bridge.codecs.trpc_keys import (
    ADK_PREFIX,
    CODE_EXECUTION_RESULT,
    ERROR_KEYS,
    EXECUTABLE_CODE,
    FUNCTION_CALL,
    FUNCTION_RESPONSE,
    META_ERROR_CODE,
    META_ERROR_MESSAGE,
    META_ERROR_PARAM,
    META_ERROR_TYPE,
    META_OBJECT_TYPE,
    META_RESPONSE_ID,
    META_STATE_DELTA,
    META_TAG,
    META_TASK_STATE,
    PART_CONTENT_TYPE,
    PART_THOUGHT,
    PART_TYPE,
    decode_state_delta,
    file_part_type,
    go_json,
)
from trpc_bridge.events import (
    AgentEvent,
    ChatMessage,
    Choice,
    ContentPart,
    ErrorType,
    FunctionCall,
    ObjectType,
    ResponseError,
    Role,
    Tag,
    ToolCall,
)

log = logging.getLogger(__name__)

#: Like trpc's ``A2ADataPartMapper``: given a DataPart of a type the bridge does not know
#: (its ``data`` and part ``metadata``), return the content parts it stands for, or
#: ``None`` to leave it to the next mapper. Mappers run in order; the first answer wins.
DataPartMapper = Callable[[Any, JsonMap], Sequence[ContentPart] | None]

# a2a-sdk's 0.3 layer wraps non-object DataPart values as {"value": …} with this flag.
_DATA_PART_COMPAT = "data_part_compat"


# --- parts → content ------------------------------------------------------------------


@dataclass
class _Content:
    """The parsed parts of one message (trpc's ``parseA2AMessagePartsWithMappers``)."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_responses: list[ChatMessage] = field(default_factory=list)
    code: str | None = None
    code_result: str | None = None
    content_parts: list[ContentPart] = field(default_factory=list)

    def shown_text(self) -> str:
        """What a text choice shows: code, else the code result, else the text."""
        if self.code is not None:
            return self.code
        if self.code_result is not None:
            return self.code_result
        return self.text


def _meta_flag(metadata: JsonMap, key: str) -> bool:
    # JSON booleans only: trpc treats the string "true" as no marker.
    return metadata.get(key) is True or metadata.get(ADK_PREFIX + key) is True


def _data_part_type(metadata: JsonMap) -> str:
    adk = metadata.get(ADK_PREFIX + PART_TYPE)
    return adk if isinstance(adk, str) else as_str(metadata.get(PART_TYPE))


def _json_text(value: Any) -> str:
    """``args`` / ``response``: strings verbatim, objects as Go re-serialises them."""
    return value if isinstance(value, str) else go_json(value)


def _function_call(data: Any) -> ToolCall | None:
    call = as_map(data)
    name = as_str(call.get("name"))
    if not name:  # trpc drops calls without a name
        return None
    args = call.get("args")
    arguments = (
        args if isinstance(args, str) else go_json(args) if isinstance(args, Mapping) else ""
    )
    return ToolCall(
        id=as_str(call.get("id")),
        type=as_str(call.get("type")),
        function=FunctionCall(name=name, arguments=arguments),
    )


def _function_response(data: Any) -> ChatMessage:
    response = as_map(data)
    content = response.get("response")
    return ChatMessage(
        role=Role.TOOL,
        content="" if content is None else _json_text(content),
        tool_id=as_str(response.get("id")),
        tool_name=as_str(response.get("name")),
    )


def _file_content(part: WirePart) -> ContentPart:
    data: bytes | None = None
    if part.file_base64 is not None:
        try:
            data = base64.b64decode(part.file_base64, validate=True)
        except (binascii.Error, ValueError):
            data = part.file_base64.encode()  # trpc falls back to the raw bytes
    return ContentPart(
        type=file_part_type(part.metadata.get(PART_CONTENT_TYPE), part.mime_type, part.name),
        data=data,
        url=part.file_uri if data is None else "",
        mime_type=part.mime_type,
        name=part.name,
    )


def _mapped(data: Any, metadata: JsonMap, mappers: Sequence[DataPartMapper]) -> list[ContentPart]:
    for mapper in mappers:
        try:
            parts = mapper(data, metadata)
        except Exception:  # a user hook; trpc logs its errors and skips the part
            log.exception("DataPart mapper %r failed; part skipped", mapper)
            return []
        if parts is not None:
            return list(parts)
    return []


def _parse_parts(parts: Iterable[WirePart], mappers: Sequence[DataPartMapper]) -> _Content:
    out = _Content()
    for part in parts:
        if part.kind == "text":
            if _meta_flag(part.metadata, PART_THOUGHT):
                out.reasoning += part.text
            else:
                out.text += part.text
            continue
        if part.kind == "file":
            out.content_parts.append(_file_content(part))
            continue
        data = part.data
        if part.metadata.get(_DATA_PART_COMPAT) is True and isinstance(data, Mapping):
            data = data.get("value")
        kind = _data_part_type(part.metadata)
        if kind == FUNCTION_CALL:
            call = _function_call(data)
            if call is not None:
                out.tool_calls.append(call)
        elif kind == FUNCTION_RESPONSE:
            out.tool_responses.append(_function_response(data))
        elif kind == EXECUTABLE_CODE:
            out.code = _code_field(data, "code")
        elif kind == CODE_EXECUTION_RESULT:
            out.code_result = _code_field(data, "output")
        else:
            out.content_parts.extend(_mapped(data, part.metadata, mappers))
    return out


def _code_field(data: Any, key: str) -> str:
    value = as_map(data)
    return as_str(value.get(key)) or as_str(value.get("content"))


# --- metadata -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Meta:
    """Response metadata of one message (§4.3 "Message metadata")."""

    object_type: str
    tag: str
    response_id: str
    state_delta: dict[str, bytes | None]
    task_state: str
    raw: JsonMap

    @classmethod
    def read(cls, metadata: JsonMap, task_state: str = "") -> _Meta:
        state = task_state or normalise_state(metadata.get(META_TASK_STATE))
        return cls(
            object_type=as_str(metadata.get(META_OBJECT_TYPE)),
            tag=as_str(metadata.get(META_TAG)),
            response_id=as_str(metadata.get(META_RESPONSE_ID)),
            state_delta=decode_state_delta(metadata.get(META_STATE_DELTA)),
            task_state=state,
            raw=metadata,
        )

    def error(self, fallback_text: str) -> ResponseError | None:
        """trpc's ``ResponseErrorFromMetadata``."""
        present = self.object_type == ObjectType.ERROR or any(
            as_str(self.raw.get(k)) for k in ERROR_KEYS
        )
        if not present:
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


def _merged(*maps: JsonMap) -> dict[str, Any]:
    """Later maps win (trpc v1: status.message.metadata overlaid by the outer metadata)."""
    out: dict[str, Any] = {}
    for m in maps:
        out.update(m)
    return out


def _failure_text(state: str) -> str:
    return f"remote task {state}"


def _role(role: str) -> str:
    return Role.USER if role == "user" else Role.ASSISTANT


# --- event construction ---------------------------------------------------------------


@dataclass(frozen=True)
class _Unit:
    """One message-like unit to turn into an event: a message, an artifact, a status."""

    fallback_id: str
    role: str
    content: _Content
    meta: _Meta
    #: From a failure-state / final status or a ``lastChunk`` artifact: errors are terminal.
    terminal_frame: bool = False

    @property
    def event_id(self) -> str:
        return self.meta.response_id or self.fallback_id


class _EventFactory:
    def __init__(self, invocation_id: str, author: str) -> None:
        self._invocation_id = invocation_id
        self._author = author

    def new(self, unit: _Unit, **fields: Any) -> AgentEvent:
        tag = unit.meta.tag
        if not tag and unit.content.code is not None:
            tag = Tag.CODE  # ADK peers send code parts without trpc's tag
        elif not tag and unit.content.code_result is not None:
            tag = Tag.CODE_RESULT
        return AgentEvent(
            id=unit.event_id,
            tag=tag,
            state_delta=unit.meta.state_delta,
            invocation_id=self._invocation_id,
            author=self._author,
            **fields,
        )

    def error_event(self, unit: _Unit) -> AgentEvent | None:
        """Rules 1 and 2 of §4.4: failure states and structured errors."""
        content = unit.content
        if unit.meta.is_failure():
            failure = unit.meta.error(content.text) or ResponseError(
                type=ErrorType.FLOW, message=content.text or _failure_text(unit.meta.task_state)
            )
            return self.new(unit, object=ObjectType.ERROR, done=True, error=failure)
        error = unit.meta.error(content.text)
        if error is None:
            return None
        if unit.terminal_frame:
            return self.new(unit, object=ObjectType.ERROR, done=True, error=error)
        message = ChatMessage(
            role=_role(unit.role),
            content=content.shown_text() or error.message,
            reasoning_content=content.reasoning,
        )
        object_type = unit.meta.object_type
        return self.new(
            unit,
            object=ObjectType.COMPLETION if object_type in ("", ObjectType.ERROR) else object_type,
            error=error,
            choices=[Choice(message=message)],
        )


def _tool_call_message(content: _Content) -> ChatMessage:
    return ChatMessage(
        role=Role.ASSISTANT,
        content=content.text,
        reasoning_content=content.reasoning,
        tool_calls=content.tool_calls,
        content_parts=content.content_parts,
    )


def _text_message(role: str, content: _Content) -> ChatMessage:
    return ChatMessage(
        role=_role(role),
        content=content.shown_text(),
        reasoning_content=content.reasoning,
        content_parts=content.content_parts,
    )


def _has_text(content: _Content) -> bool:
    return bool(content.text or content.reasoning or content.content_parts)


# --- non-streaming ---------------------------------------------------------------------


def _unary_event(factory: _EventFactory, unit: _Unit) -> AgentEvent:
    """``buildNonStreamingResponse``: all of a message's content in one event's choices."""
    error_event = factory.error_event(unit)
    if error_event is not None:
        return error_event
    content = unit.content
    choices: list[Choice] = []
    if content.tool_calls:
        choices.append(Choice(message=_tool_call_message(content)))
    choices.extend(
        Choice(index=len(choices) + i, message=m) for i, m in enumerate(content.tool_responses)
    )
    shows_text = _has_text(content) or content.code is not None or content.code_result is not None
    if not content.tool_calls and shows_text:
        choices.append(Choice(index=len(choices), message=_text_message(unit.role, content)))
    if not choices:
        choices.append(Choice(message=ChatMessage(role=Role.ASSISTANT)))
    object_type = unit.meta.object_type or _inferred_object(content)
    return factory.new(unit, object=object_type, choices=choices)


def _inferred_object(content: _Content) -> str:
    if content.tool_calls:
        return ObjectType.COMPLETION
    if content.tool_responses:
        return ObjectType.TOOL_RESPONSE
    if content.code is not None or content.code_result is not None:
        return ObjectType.CODE_EXECUTION
    return ObjectType.COMPLETION


def _message_unit(
    message: WireMessage,
    mappers: Sequence[DataPartMapper],
    *,
    extra: JsonMap | None = None,
    state: str = "",
) -> _Unit:
    return _Unit(
        fallback_id=message.message_id,
        role=message.role,
        content=_parse_parts(message.parts, mappers),
        meta=_Meta.read(_merged(message.metadata, extra or {}), state),
    )


def decode_result(
    result: Any,
    *,
    mappers: Sequence[DataPartMapper] = (),
    invocation_id: str = "",
    author: str = "",
) -> list[AgentEvent]:
    """Events of a unary result (a Message or a Task, either wire shape); the last one is
    ``done``. Raises :class:`CodecError` only if ``result`` is not an A2A result."""
    frame = read_result(result)
    factory = _EventFactory(invocation_id, author)
    units: list[_Unit] = []
    if isinstance(frame, WireMessage):
        units.append(_message_unit(frame, mappers))
    elif isinstance(frame, TaskFrame):
        units.extend(_task_units(frame, mappers))
    else:  # a lone update as a unary result: decode it like its message would be
        units.extend(_update_units(frame, mappers))
    events: list[AgentEvent] = []
    for unit in units:
        event = _unary_event(factory, unit)
        events.append(event)
        if event.is_terminal_error():
            break
    if events:
        events[-1].done = True
    return events


def _task_units(task: TaskFrame, mappers: Sequence[DataPartMapper]) -> list[_Unit]:
    # a2a-sdk servers keep the caller's own message in the history; it is not output.
    units = [_message_unit(m, mappers) for m in task.history if m.role != "user"]
    if task.state in FAILURE_STATES:
        status = task.status_message or WireMessage("", "agent", (), {})
        units.append(_message_unit(status, mappers, extra=task.metadata, state=task.state))
        return units
    for artifact in task.artifacts:
        units.append(
            _Unit(
                fallback_id=artifact.artifact_id,
                role="agent",
                content=_parse_parts(artifact.parts, mappers),
                meta=_Meta.read(_merged(task.metadata, artifact.metadata)),
            )
        )
    # Go v0 ignores a successful status message; a2a-sdk servers put final answers there.
    if task.status_message is not None and task.status_message.parts:
        units.append(_message_unit(task.status_message, mappers, extra=task.metadata))
    return units


def _update_units(
    frame: StatusFrame | ArtifactFrame, mappers: Sequence[DataPartMapper]
) -> list[_Unit]:
    if isinstance(frame, ArtifactFrame):
        return [_artifact_unit(frame, mappers)]
    message = frame.message or WireMessage("", "agent", (), {})
    return [_status_unit(frame, message, mappers)]


def _artifact_unit(frame: ArtifactFrame, mappers: Sequence[DataPartMapper]) -> _Unit:
    return _Unit(
        fallback_id=frame.artifact.artifact_id,
        role="agent",
        content=_parse_parts(frame.artifact.parts, mappers),
        # trpc v1: artifact metadata overlaid by the event metadata (v0 reads the event's).
        meta=_Meta.read(_merged(frame.artifact.metadata, frame.metadata)),
        terminal_frame=frame.last_chunk,
    )


def _status_unit(
    frame: StatusFrame, message: WireMessage, mappers: Sequence[DataPartMapper]
) -> _Unit:
    state = frame.state if frame.state in FAILURE_STATES else ""
    return _Unit(
        fallback_id=message.message_id,
        role=message.role or "agent",
        content=_parse_parts(message.parts, mappers),
        # Go v0 never reads status.message.metadata; v1 merges it under the outer one.
        meta=_Meta.read(_merged(message.metadata, frame.metadata), state),
        terminal_frame=frame.state in TERMINAL_STATES,
    )


# --- streaming --------------------------------------------------------------------------

_RESPONSE_KEYS = (META_OBJECT_TYPE, META_TAG, META_RESPONSE_ID, META_STATE_DELTA)


def _has_response_metadata(metadata: JsonMap) -> bool:
    return (
        any(metadata.get(k) for k in _RESPONSE_KEYS)
        or any(as_str(metadata.get(k)) for k in ERROR_KEYS)
        or metadata.get(META_OBJECT_TYPE) == ObjectType.ERROR
    )


@dataclass
class _Pieces:
    """Text and reasoning streamed so far under one response id."""

    text: str = ""
    reasoning: str = ""


class StreamDecoder:
    """Decodes one A2A stream into events. Keep one per stream.

    State: the task id/context id and last task state seen (so the caller can cancel the
    task, recover with ``tasks/get``, or report a stream that ended too early), and the
    text streamed per response id (to recognise the Go v0 server's re-sent final text).
    """

    def __init__(
        self,
        *,
        mappers: Sequence[DataPartMapper] = (),
        invocation_id: str = "",
        author: str = "",
    ) -> None:
        self._mappers = tuple(mappers)
        self._factory = _EventFactory(invocation_id, author)
        self._pieces: dict[str, _Pieces] = {}
        self._seen_artifacts: set[str] = set()
        self.task_id = ""
        self.context_id = ""
        #: Last task state seen (0.3 spelling), ``""`` before any task frame.
        self.state = ""
        #: True once a terminal state or a terminal error was decoded.
        self.finished = False

    @property
    def saw_task(self) -> bool:
        return bool(self.state)

    def feed_proto(self, response: StreamResponse) -> list[AgentEvent]:
        return self.feed(proto_to_json(response))

    def feed(self, result: Any) -> list[AgentEvent]:
        """Events for one streamed result. Raises only :class:`CodecError` (unrecognisable
        result); the caller should skip such a frame, as trpc's client does."""
        frame = read_result(result)
        if self.finished:
            return []  # trpc stops at a terminal error; nothing follows a terminal state
        events = [e for unit in self._units(frame) if (e := self._event(unit)) is not None]
        if any(e.is_terminal_error() for e in events):
            self.finished = True
        return events

    def ended_early(self) -> bool:
        """The stream showed a task but ended before the task reached an end state."""
        return self.saw_task and not self.finished

    # --- frames → units ---------------------------------------------------------------

    def _track(self, task_id: str, context_id: str, state: str) -> None:
        self.task_id = task_id or self.task_id
        self.context_id = context_id or self.context_id
        if state:
            self.state = state
            self.finished = self.finished or state in TERMINAL_STATES

    def _units(self, frame: Frame) -> list[_Unit]:
        mappers = self._mappers
        if isinstance(frame, WireMessage):
            return [_message_unit(frame, mappers)]
        if isinstance(frame, ArtifactFrame):
            self._track(frame.task_id, frame.context_id, self.state or "working")
            self._seen_artifacts.add(frame.artifact.artifact_id)
            keep = frame.artifact.parts or _has_response_metadata(
                _merged(frame.artifact.metadata, frame.metadata)
            )
            # Go v0 drops every lastChunk frame, with the llm_response_id / state_delta the
            # server put there; only empty frames without response metadata are noise.
            return [_artifact_unit(frame, mappers)] if keep else []
        if isinstance(frame, StatusFrame):
            units = self._status_units(frame)
            self._track(frame.task_id, frame.context_id, frame.state)
            return units
        units = self._task_units(frame)
        self._track(frame.task_id, frame.context_id, frame.state)
        return units

    def _status_units(self, frame: StatusFrame) -> list[_Unit]:
        message = frame.message or WireMessage("", "agent", (), {})
        merged = _merged(message.metadata, frame.metadata)
        failure = frame.state in FAILURE_STATES
        # Go v0 drops working / input-required / completed statuses even with content.
        if failure or message.parts or _has_response_metadata(merged):
            return [_status_unit(frame, message, self._mappers)]
        return []

    def _task_units(self, task: TaskFrame) -> list[_Unit]:
        if task.state in FAILURE_STATES:
            status = task.status_message or WireMessage("", "agent", (), {})
            return [_message_unit(status, self._mappers, extra=task.metadata, state=task.state)]
        units: list[_Unit] = []
        for artifact in task.artifacts:
            if artifact.artifact_id in self._seen_artifacts:
                continue
            self._seen_artifacts.add(artifact.artifact_id)
            units.append(
                _Unit(
                    fallback_id=artifact.artifact_id,
                    role="agent",
                    content=_parse_parts(artifact.parts, self._mappers),
                    meta=_Meta.read(_merged(task.metadata, artifact.metadata)),
                )
            )
        final = task.status_message
        if final is not None and final.parts and final.role != "user":
            units.append(_message_unit(final, self._mappers, extra=task.metadata))
        return units

    # --- units → events ---------------------------------------------------------------

    def _event(self, unit: _Unit) -> AgentEvent | None:
        factory = self._factory
        error_event = factory.error_event(unit)
        if error_event is not None:
            return error_event
        content = unit.content
        if content.tool_calls:
            return self._tool_call_event(unit)
        if content.tool_responses:
            choices = [Choice(index=i, message=m) for i, m in enumerate(content.tool_responses)]
            if _has_text(content):  # Go v0 loses text that comes with tool results
                choices.append(
                    Choice(index=len(choices), message=_text_message(unit.role, content))
                )
            return factory.new(unit, object=ObjectType.TOOL_RESPONSE, choices=choices)
        if content.code is not None or content.code_result is not None:
            # Go v0 turns code into a partial delta; trpc agents emit it as a full message.
            return factory.new(
                unit,
                object=unit.meta.object_type or ObjectType.CODE_EXECUTION,
                choices=[Choice(message=_text_message(unit.role, content))],
            )
        if unit.meta.object_type == ObjectType.COMPLETION:
            return self._completing_event(unit)
        return self._delta_event(unit)

    def _tool_call_event(self, unit: _Unit) -> AgentEvent:
        message = _tool_call_message(unit.content)
        pieces = self._pieces.pop(unit.event_id, None)
        if pieces is not None and not (message.content or message.reasoning_content):
            # The Go server drops the text an LLM wrote next to its tool calls, but it
            # streamed it first under the same id: restore the complete response.
            message.content = pieces.text
            message.reasoning_content = pieces.reasoning
        return self._factory.new(
            unit, object=ObjectType.COMPLETION, choices=[Choice(message=message)]
        )

    def _completing_event(self, unit: _Unit) -> AgentEvent:
        """A non-partial ``chat.completion`` text frame: the complete response.

        The Go v0 server re-sends the full text after its deltas (Go v0's client then
        shows it twice); trpc's v1 server sends the frame with no parts. Either way the
        event carries the complete text in ``message`` and no ``delta``.
        """
        pieces = self._pieces.pop(unit.event_id, _Pieces())
        message = _text_message(unit.role, unit.content)
        if not message.content:
            message.content = pieces.text
        if not message.reasoning_content:
            message.reasoning_content = pieces.reasoning
        return self._factory.new(
            unit, object=ObjectType.COMPLETION, choices=[Choice(message=message)]
        )

    def _delta_event(self, unit: _Unit) -> AgentEvent:
        content = unit.content
        object_type = unit.meta.object_type or ObjectType.CHUNK
        graph_done = object_type == ObjectType.GRAPH_EXECUTION
        if object_type == ObjectType.CHUNK and (content.text or content.reasoning):
            pieces = self._pieces.setdefault(unit.event_id, _Pieces())
            pieces.text += content.text
            pieces.reasoning += content.reasoning
        return self._factory.new(
            unit,
            object=object_type,
            is_partial=not graph_done,
            done=graph_done,
            choices=[Choice(delta=_text_message(unit.role, content))],
        )


def decode_stream(
    results: Iterable[Any], *, mappers: Sequence[DataPartMapper] = ()
) -> list[AgentEvent]:
    """All events of a complete stream (a convenience for tests and replays)."""
    decoder = StreamDecoder(mappers=mappers)
    return [event for result in results for event in decoder.feed(result)]


__all__ = ["DataPartMapper", "StreamDecoder", "decode_result", "decode_stream"]
