"""A2A parts → content (trpc's ``parseA2AMessagePartsWithMappers``,
``docs/specs/trpc-interaction.md`` §4.3): text and reasoning, tool calls and results, code, files,
and DataParts of unknown types through the caller's mappers."""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trpc_bridge.codecs.a2a.frames import JsonMap, WirePart, as_map, as_str
from trpc_bridge.codecs.a2a.reasoning import is_reasoning
from trpc_bridge.codecs.trpc.keys import (
    ADK_PREFIX,
    CODE_EXECUTION_RESULT,
    EXECUTABLE_CODE,
    FUNCTION_CALL,
    FUNCTION_RESPONSE,
    PART_CONTENT_TYPE,
    PART_TYPE,
    file_part_type,
    go_json,
)
from trpc_bridge.events import ChatMessage, ContentPart, FunctionCall, Role, ToolCall

log = logging.getLogger(__name__)

#: Like trpc's ``A2ADataPartMapper``: given a DataPart of a type the bridge does not know
#: (its ``data`` and part ``metadata``), return the content parts it stands for, or
#: ``None`` to leave it to the next mapper. Mappers run in order; the first answer wins.
DataPartMapper = Callable[[Any, JsonMap], Sequence[ContentPart] | None]

# a2a-sdk's 0.3 layer wraps non-object DataPart values as {"value": …} with this flag.
_DATA_PART_COMPAT = "data_part_compat"


@dataclass(slots=True)
class Content:
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
        # ADK and most peers write no type: a model's tool call is a function call.
        type=as_str(call.get("type")) or "function",
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


def parse_parts(parts: Iterable[WirePart], mappers: Sequence[DataPartMapper]) -> Content:
    out = Content()
    for part in parts:
        if part.kind == "text":
            if is_reasoning(part.metadata):
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


def has_content(parts: Sequence[WirePart]) -> bool:
    """Any part but an empty text (the one the 1.0 wire adds to satisfy required fields,
    ``docs/specs/trpc-interaction.md`` §2.12)."""
    if not parts:  # most frames of a trpc stream carry none
        return False
    return any(part.kind != "text" or part.text for part in parts)
