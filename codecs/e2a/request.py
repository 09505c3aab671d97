"""An E2A envelope as the agent's :class:`~trpc_bridge.events.AgentRequest`.

The user's input is read from ``params`` in the order of docs/specs/e2a.md §7: ``prompt`` (ACP
content blocks), else ``content_blocks``, else the first non-empty ``text`` / ``content``
/ ``query``. Text blocks make the request text (joined without separator, as trpc does);
images and audio become inline content parts, ``resource_link`` blocks and
``params.files`` / ``attachments`` URL parts, embedded resources inline file parts named by
their URI. Block kinds this bridge does not know are skipped, not refused.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from trpc_bridge.codecs.e2a.errors import E2AFormatError, format_error
from trpc_bridge.codecs.e2a.models import E2AEnvelope, E2AFileRef
from trpc_bridge.events import AgentRequest, ContentPart

_TEXT_KEYS = ("text", "content", "query")


def envelope_to_agent_request(envelope: E2AEnvelope) -> AgentRequest:
    params = envelope.params
    blocks = _blocks(params)
    texts: list[str] = []
    parts: list[ContentPart] = []
    if blocks is None:
        texts.append(
            next(
                (params[k] for k in _TEXT_KEYS if isinstance(params.get(k), str) and params[k]), ""
            )
        )
    else:
        for index, block in enumerate(blocks):
            if not isinstance(block, Mapping):
                raise E2AFormatError(f"prompt[{index}] must be an object")
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            else:
                part = _block_part(block, f"prompt[{index}]")
                if part is not None:
                    parts.append(part)
    # A2A files are both content blocks and ``files`` entries: one part per URL.
    linked = {p.url for p in parts if p.url}
    parts.extend(p for p in _file_parts(params) if p.url not in linked)
    message = params.get("message")
    metadata = message.get("metadata") if isinstance(message, Mapping) else None
    version = metadata.get("interaction_spec_version") if isinstance(metadata, Mapping) else None
    return AgentRequest(
        text="".join(texts),
        content_parts=parts,
        context_id=envelope.context_id or envelope.session_id or "",
        user_id=envelope.user_id or "",
        invocation_id=envelope.request_id or "",
        message_id=envelope.message_id or "",
        interaction_spec_version=version if isinstance(version, str) else None,
        metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
    )


def _blocks(params: Mapping[str, Any]) -> list[Any] | None:
    for key in ("prompt", "content_blocks"):
        value = params.get(key)
        if isinstance(value, list) and value:
            return value
    return None


def _mime(block: Mapping[str, Any]) -> str:
    value = block.get("mimeType", block.get("mime_type"))
    return value if isinstance(value, str) else ""


def _block_part(block: Mapping[str, Any], where: str) -> ContentPart | None:
    kind = block.get("type")
    if kind in ("image", "audio"):
        data = block.get("data")
        if isinstance(data, str) and data:
            return ContentPart(
                type=kind, data=decode_base64(data, where), mime_type=_mime(block), name=kind
            )
        uri = block.get("uri")
        return (
            ContentPart(type=kind, url=uri, mime_type=_mime(block))
            if isinstance(uri, str)
            else None
        )
    if kind == "resource_link":
        uri = block.get("uri")
        if not isinstance(uri, str):
            raise E2AFormatError(f"{where}: resource_link needs a uri")
        return ContentPart(
            type="file", url=uri, name=str(block.get("name") or ""), mime_type=_mime(block)
        )
    if kind == "resource":
        resource = block.get("resource")
        if not isinstance(resource, Mapping):
            raise E2AFormatError(f"{where}: resource needs a resource object")
        name = str(resource.get("uri") or "")
        if isinstance(resource.get("text"), str):
            data = resource["text"].encode()
        elif isinstance(resource.get("blob"), str):
            data = decode_base64(resource["blob"], where)
        else:
            raise E2AFormatError(f"{where}: resource needs text or blob")
        return ContentPart(type="file", data=data, name=name, mime_type=_mime(resource))
    return None


def _file_parts(params: Mapping[str, Any]) -> list[ContentPart]:
    parts = []
    for key in ("files", "attachments"):
        items = params.get(key)
        if not isinstance(items, list):
            continue
        for index, item in enumerate(items):
            try:
                ref = E2AFileRef.model_validate(item)
            except ValidationError as exc:
                raise format_error(f"params.{key}[{index}]", exc) from None
            parts.append(
                ContentPart(
                    type="file", url=ref.uri, name=ref.name or "", mime_type=ref.mime_type or ""
                )
            )
    return parts


def decode_base64(data: str, where: str) -> bytes:
    """Strict base64 (ACP and E2A inline data), a typed error instead of binascii's."""
    try:
        return base64.b64decode(data, validate=True)
    except ValueError:
        raise E2AFormatError(f"{where}: data is not base64") from None
