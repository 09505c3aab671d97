"""The event model ⇄ its gRPC contract, ``protos/trpc_bridge/v1/agent.proto``.

Every model value converts to a message and back to an equal value (a hypothesis
property in ``tests/codecs/test_agent_proto.py``), within the contract's documented edges:

- ``timestamp`` (float Unix seconds) travels as ``google.protobuf.Timestamp``, at
  nanosecond resolution: exact for every time after 2**24 s (mid-July 1970), where a
  float's own resolution is coarser than a nanosecond. NaN, infinities and times outside
  years 1–9999 have no Timestamp: :class:`ProtoModelError`.
- ``AgentRequest.metadata`` is a ``google.protobuf.Struct`` (numbers are doubles, as in
  JSON and in A2A's gRPC binding); integral numbers come back as ``int``.
- An event from a foreign agent may leave ``event_id`` and ``timestamp`` unset: it gets a
  fresh id and the time of receipt, what the Python model's defaults give.
- ``usage`` counts travel as ``int64``: a count outside that range raises
  :class:`ProtoModelError`.

Messages from outside (a sidecar's events, a caller's request) are checked here: what the
proto's types allow but the model does not (a content part type other than text / image /
audio / file, Timestamp nanos out of range) raises :class:`ProtoModelError`, which the
caller turns into a precise error. The other way, a model value the contract cannot hold
(a choice index outside int32, a NaN timestamp, metadata that is not JSON-like) raises it
too.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Sequence
from typing import Any, cast, get_args

from google.protobuf import json_format, struct_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from trpc_bridge.agent import Skill
from trpc_bridge.events import (
    AgentEvent,
    AgentRequest,
    ChatMessage,
    Choice,
    ContentPart,
    ContentPartType,
    FunctionCall,
    ResponseError,
    ToolCall,
    Usage,
)
from trpc_bridge.v1 import agent_pb2 as pb


class ProtoModelError(ValueError):
    """A message (or model value) that the other side of the conversion cannot hold."""


_PART_TYPES: frozenset[str] = frozenset(get_args(ContentPartType))
# google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
_MIN_SECONDS = -62_135_596_800
_MAX_SECONDS = 253_402_300_799
_NANOS = 1_000_000_000
# Doubles in this range hold every integer exactly: those come back from a Struct as ints.
_EXACT_INT = 2**53


# --- model → proto ------------------------------------------------------------------------


def _part_to_proto(part: ContentPart) -> pb.ContentPart:
    return pb.ContentPart(
        type=part.type,
        text=part.text,
        data=part.data,
        url=part.url,
        mime_type=part.mime_type,
        name=part.name,
    )


def _message_to_proto(message: ChatMessage) -> pb.ChatMessage | None:
    if not message.role and message.is_empty():
        return None  # the choice's other half: absent on the wire, empty in the model
    return pb.ChatMessage(
        role=message.role,
        content=message.content,
        reasoning_content=message.reasoning_content,
        tool_calls=[
            pb.ToolCall(
                id=call.id,
                type=call.type,
                function=pb.FunctionCall(
                    name=call.function.name, arguments=call.function.arguments
                ),
            )
            for call in message.tool_calls
        ],
        tool_id=message.tool_id,
        tool_name=message.tool_name,
        content_parts=[_part_to_proto(part) for part in message.content_parts],
    )


def timestamp_to_proto(seconds: float) -> Timestamp:
    """Float Unix seconds → Timestamp, rounded to the nearest nanosecond."""
    if not math.isfinite(seconds):
        raise ProtoModelError(f"timestamp {seconds} has no google.protobuf.Timestamp")
    whole = math.floor(seconds)
    nanos = round((seconds - whole) * _NANOS)  # seconds - whole is exact (Sterbenz)
    if nanos == _NANOS:
        whole, nanos = whole + 1, 0
    if not _MIN_SECONDS <= whole <= _MAX_SECONDS:
        raise ProtoModelError(f"timestamp {seconds} is outside years 1-9999")
    return Timestamp(seconds=whole, nanos=nanos)


def event_to_proto(event: AgentEvent) -> pb.AgentEvent:
    try:
        return _event_to_proto(event)
    except ProtoModelError:
        raise
    except ValueError as exc:  # protobuf's own range checks (int32 index)
        raise ProtoModelError(str(exc)) from exc


def _event_to_proto(event: AgentEvent) -> pb.AgentEvent:
    error = event.error
    return pb.AgentEvent(
        id=event.id,
        object=event.object,
        choices=[
            pb.Choice(
                index=choice.index,
                message=_message_to_proto(choice.message),
                delta=_message_to_proto(choice.delta),
                finish_reason=choice.finish_reason,
            )
            for choice in event.choices
        ],
        is_partial=event.is_partial,
        done=event.done,
        error=None
        if error is None
        else pb.ResponseError(
            type=error.type, message=error.message, code=error.code, param=error.param
        ),
        tag=event.tag,
        state_delta={key: pb.StateValue(value=value) for key, value in event.state_delta.items()},
        author=event.author,
        invocation_id=event.invocation_id,
        event_id=event.event_id,
        timestamp=timestamp_to_proto(event.timestamp),
        usage=None
        if event.usage is None
        else pb.Usage(
            prompt_tokens=event.usage.prompt_tokens,
            completion_tokens=event.usage.completion_tokens,
            total_tokens=event.usage.total_tokens,
        ),
    )


def request_to_proto(request: AgentRequest) -> pb.AgentRequest:
    metadata = struct_pb2.Struct()
    try:
        metadata.update(request.metadata)
    except (TypeError, ValueError) as exc:
        raise ProtoModelError(f"request metadata is not JSON-like: {exc}") from exc
    return pb.AgentRequest(
        text=request.text,
        content_parts=[_part_to_proto(part) for part in request.content_parts],
        context_id=request.context_id,
        user_id=request.user_id,
        invocation_id=request.invocation_id,
        message_id=request.message_id,
        interaction_spec_version=request.interaction_spec_version,
        metadata=metadata,
    )


def info_to_proto(name: str, description: str, skills: Iterable[Skill]) -> pb.AgentInfo:
    return pb.AgentInfo(
        name=name,
        description=description,
        skills=[
            pb.Skill(name=skill.name, description=skill.description, tags=skill.tags)
            for skill in skills
        ],
    )


# --- proto → model ------------------------------------------------------------------------
# Built with the validating constructors: pydantic's model_construct is far slower here
# (about a millisecond a call against a few microseconds), and the proto's types already
# are the model's, so validation costs little. The content part type is checked first, for
# a precise message.


def _part_from_proto(part: pb.ContentPart) -> ContentPart:
    kind = part.type or "text"
    if kind not in _PART_TYPES:
        raise ProtoModelError(
            f"content part type {part.type!r} is not one of {', '.join(sorted(_PART_TYPES))}"
        )
    return ContentPart(
        type=cast(ContentPartType, kind),
        text=part.text,
        data=part.data if part.HasField("data") else None,
        url=part.url,
        mime_type=part.mime_type,
        name=part.name,
    )


def _message_from_proto(message: pb.ChatMessage) -> ChatMessage:
    return ChatMessage(
        role=message.role,
        content=message.content,
        reasoning_content=message.reasoning_content,
        tool_calls=[
            ToolCall(
                id=call.id,
                type=call.type,
                function=FunctionCall(name=call.function.name, arguments=call.function.arguments),
            )
            for call in message.tool_calls
        ],
        tool_id=message.tool_id,
        tool_name=message.tool_name,
        content_parts=[_part_from_proto(part) for part in message.content_parts],
    )


def _choice_from_proto(choice: pb.Choice) -> Choice:
    # A choice has a message or a delta, rarely both: reading the absent one would build
    # its (empty) proto only to copy nothing from it.
    return Choice(
        index=choice.index,
        message=_message_from_proto(choice.message)
        if choice.HasField("message")
        else ChatMessage(),
        delta=_message_from_proto(choice.delta) if choice.HasField("delta") else ChatMessage(),
        finish_reason=choice.finish_reason if choice.HasField("finish_reason") else None,
    )


def _error_from_proto(error: pb.ResponseError) -> ResponseError:
    return ResponseError(
        type=error.type,
        message=error.message,
        code=error.code if error.HasField("code") else None,
        param=error.param if error.HasField("param") else None,
    )


def timestamp_from_proto(stamp: Timestamp) -> float:
    if not 0 <= stamp.nanos < _NANOS:
        raise ProtoModelError(f"timestamp nanos {stamp.nanos} is outside 0-999999999")
    return float(stamp.seconds + stamp.nanos / _NANOS)


def event_from_proto(message: pb.AgentEvent) -> AgentEvent:
    """The model event of ``message``; :class:`ProtoModelError` if it violates the model."""
    return AgentEvent(
        id=message.id,
        object=message.object,
        choices=[_choice_from_proto(choice) for choice in message.choices],
        is_partial=message.is_partial,
        done=message.done,
        error=_error_from_proto(message.error) if message.HasField("error") else None,
        tag=message.tag,
        state_delta={
            key: value.value if value.HasField("value") else None
            for key, value in message.state_delta.items()
        },
        author=message.author,
        invocation_id=message.invocation_id,
        event_id=message.event_id or os.urandom(16).hex(),
        timestamp=timestamp_from_proto(message.timestamp)
        if message.HasField("timestamp")
        else time.time(),
        usage=Usage(
            prompt_tokens=message.usage.prompt_tokens,
            completion_tokens=message.usage.completion_tokens,
            total_tokens=message.usage.total_tokens,
        )
        if message.HasField("usage")
        else None,
    )


def _json_value(value: Any) -> Any:
    """A Struct value as JSON would give it: integral doubles back to ints."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT_INT:
        return int(value)
    if isinstance(value, dict):
        return {key: _json_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_value(item) for item in value]
    return value


def request_from_proto(message: pb.AgentRequest) -> AgentRequest:
    """The model request of ``message``; :class:`ProtoModelError` if it violates the model."""
    return AgentRequest(
        text=message.text,
        content_parts=[_part_from_proto(part) for part in message.content_parts],
        context_id=message.context_id,
        user_id=message.user_id,
        invocation_id=message.invocation_id,
        message_id=message.message_id,
        interaction_spec_version=message.interaction_spec_version
        if message.HasField("interaction_spec_version")
        else None,
        metadata=_json_value(json_format.MessageToDict(message.metadata)),
    )


def info_from_proto(info: pb.AgentInfo) -> tuple[str, str, Sequence[Skill]]:
    """``(name, description, skills)`` of an ``AgentInfo``."""
    skills = tuple(Skill(skill.name, skill.description, tuple(skill.tags)) for skill in info.skills)
    return info.name, info.description, skills
