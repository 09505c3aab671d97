"""The user's A2A message ⇄ :class:`AgentRequest`, and version negotiation.

Outbound (``request_to_message``) writes what trpc-agent-go's ``A2AAgent`` writes
(``docs/specs/trpc-interaction.md`` §3.2, vectors Q01/Q02): text first, then one part per content
part, request metadata ``interaction_spec_version`` / ``invocation_id`` / ``user_id``.
Inbound (``message_to_request``) reads any A2A user message the way trpc-agent-go's
server does (§2.9), except that DataParts become compact JSON text (``{"count":2}``, as
trpc's v1 server writes them; Struct's ``2.0`` comes out as ``2``), not Go v0's
``map[k:v]`` rendering — a deliberate deviation, see docs/serving.md.
"""

from __future__ import annotations

from typing import Any

from a2a.types import Message, Part, Role
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Value

from trpc_bridge.codecs.a2a.proto_struct import fill_struct, struct_to_json
from trpc_bridge.codecs.trpc.keys import (
    INTERACTION_SPEC_VERSION,
    META_INVOCATION_ID,
    META_SPEC_VERSION,
    META_USER_ID,
    PART_CONTENT_TYPE,
    file_part_type,
    go_json,
)
from trpc_bridge.events import AgentRequest, ContentPart

# a2a-sdk's 0.3 compat layer wraps non-object DataPart values as {"value": …} with this flag.
_DATA_PART_COMPAT = "data_part_compat"


def supports_spec_version(version: str | None) -> bool:
    """Same major version as ours is supported (newer minors included); anything else,
    including no version at all, is not."""
    if not version:
        return False
    ours = INTERACTION_SPEC_VERSION.split(".", 1)[0]
    return version.strip().split(".", 1)[0] == ours


# --- outbound -------------------------------------------------------------------------


def content_part_to_a2a(part: ContentPart) -> Part:
    """One content part as trpc-agent-go's client sends it (FileParts carry
    ``content_type``; images and audio are named ``image`` / ``audio``)."""
    if part.type == "text":
        return Part(text=part.text)
    if part.type == "data":  # an A2A DataPart (trpc has no such content part)
        return Part(data=ParseDict(part.value, Value()))
    name = (part.name or "file") if part.type == "file" else part.type
    out = Part(filename=name, media_type=part.mime_type)
    if part.data is not None:
        out.raw = part.data
    else:
        out.url = part.url
    out.metadata.update({PART_CONTENT_TYPE: part.type})
    return out


#: Read once: each ``Role.ROLE_USER`` is a Python ``__getattr__`` call.
_ROLE_USER = Role.ROLE_USER


def request_to_message(
    request: AgentRequest,
    *,
    message_id: str,
    spec_version: str | None = INTERACTION_SPEC_VERSION,
) -> Message:
    """The A2A user message for ``request``.

    ``request.metadata`` is sent too (trpc's transferred state), but the three trpc keys
    written here win over it, so a nested hop cannot overwrite them with stale values.
    """
    metadata: dict[str, Any] = dict(request.metadata)
    if request.invocation_id:
        metadata[META_INVOCATION_ID] = request.invocation_id
    if request.user_id:
        metadata[META_USER_ID] = request.user_id
    if spec_version:
        metadata[META_SPEC_VERSION] = spec_version
    parts = [Part(text=request.text)] if request.text else []
    parts.extend(content_part_to_a2a(p) for p in request.content_parts)
    if not parts:
        parts.append(Part(text=""))  # trpc's server requires at least one part
    message = Message(
        message_id=message_id, context_id=request.context_id, role=_ROLE_USER, parts=parts
    )
    if metadata:
        fill_struct(message.metadata, metadata)
    return message


# --- inbound --------------------------------------------------------------------------


def a2a_part_to_content(part: Part) -> ContentPart | None:
    """A non-text part as a content part; ``None`` for text parts."""
    kind = part.WhichOneof("content")
    metadata = MessageToDict(part.metadata) if part.HasField("metadata") else {}
    if kind == "text" or kind is None:
        return None
    if kind == "data":
        value = MessageToDict(part.data)
        if metadata.get(_DATA_PART_COMPAT) and isinstance(value, dict) and "value" in value:
            value = value["value"]
        return ContentPart(type="text", text=go_json(value))
    part_type = file_part_type(metadata.get(PART_CONTENT_TYPE), part.media_type, part.filename)
    if kind == "raw":
        return ContentPart(
            type=part_type, data=part.raw, mime_type=part.media_type, name=part.filename
        )
    return ContentPart(type=part_type, url=part.url, mime_type=part.media_type, name=part.filename)


def message_to_request(message: Message, *, user_id: str = "") -> AgentRequest:
    """The agent's view of an inbound user message. ``user_id`` is the authenticated
    caller (from the transport), never the informational ``metadata.user_id``."""
    metadata = struct_to_json(message.metadata) if message.HasField("metadata") else {}
    texts: list[str] = []
    content: list[ContentPart] = []
    for part in message.parts:
        if part.WhichOneof("content") == "text":
            texts.append(part.text)
            continue
        converted = a2a_part_to_content(part)
        if converted is not None:
            content.append(converted)
    version = metadata.get(META_SPEC_VERSION)
    invocation = metadata.get(META_INVOCATION_ID)
    return AgentRequest(
        text="".join(texts),
        content_parts=content,
        context_id=message.context_id,
        user_id=user_id,
        invocation_id=invocation if isinstance(invocation, str) else "",
        message_id=message.message_id,
        interaction_spec_version=version if isinstance(version, str) else None,
        metadata=metadata,
    )
