"""Agent events → A2A, as trpc-agent-go's server writes them (``docs/specs/trpc-interaction.md``
§2).

Pure functions over a2a-sdk protobuf types: one agent event becomes a list of parts plus
message-level metadata (:func:`encode_event`); the runtime wraps that into a streaming
artifact update or collects it for a unary answer. The frames around the events
(``submitted``, artifact updates, the final ``lastChunk`` artifact, ``completed``,
structured errors) are :mod:`.stream_frames`'.

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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from a2a.types import (
    Part,
)
from google.protobuf.struct_pb2 import Struct

from trpc_bridge.codecs.a2a.proto_struct import fill_struct
from trpc_bridge.codecs.encoding import EncodeOptions
from trpc_bridge.codecs.trpc.keys import (
    ADK_PREFIX,
    CODE_EXECUTION_RESULT,
    EXECUTABLE_CODE,
    FUNCTION_CALL,
    FUNCTION_RESPONSE,
    META_OBJECT_TYPE,
    META_RESPONSE_ID,
    META_STATE_DELTA,
    META_TAG,
    META_USAGE,
    PART_THOUGHT,
    PART_TYPE,
    encode_state_delta,
    encode_usage,
)
from trpc_bridge.codecs.trpc.request import content_part_to_a2a
from trpc_bridge.events import AgentEvent, ChatMessage, ObjectType, Tag


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
