"""A2A ⇄ E2A (docs/specs/e2a.md §8, §12.6): a SendMessage request as an envelope, and responses as
A2A ``StreamResponse`` JSON (``task`` | ``message`` | ``statusUpdate`` | ``artifactUpdate``).

A SendMessage request is read in either wire shape (0.3 ``kind`` JSON, 1.0 JSON). Its
request-level ``metadata`` goes to ``a2a_metadata`` (§8: A2A only, not the gateway's
metadata); the message itself stays whole in ``params.message``, next to the readings a
gateway wants without parsing A2A: ``text``, ACP-shaped ``content_blocks`` (so the same
envelope can become an ACP ``session/prompt``) and ``files``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from a2a.types import StreamResponse
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError

from trpc_bridge.codecs.a2a.frames import WirePart, read_message
from trpc_bridge.codecs.e2a.constants import (
    A2A_STREAM_BRANCHES,
    KIND_A2A_MESSAGE,
    KIND_A2A_STREAM_EVENT,
    KIND_A2A_TASK,
    SOURCE_A2A,
)
from trpc_bridge.codecs.e2a.errors import E2AFormatError
from trpc_bridge.codecs.e2a.models import E2AEnvelope, E2AProvenance, E2AResponse, utc_now
from trpc_bridge.names import new_hex_id

CONVERTER = "trpc-bridge"
#: SendMessage method names (0.3 JSON-RPC and 1.0) that answer with a stream.
_STREAMING_METHODS = frozenset({"message/stream", "SendStreamingMessage"})


def envelope_from_a2a_send_message(
    params: Any,
    *,
    method: str = "SendMessage",
    jsonrpc_id: str | int | None = None,
    request_id: str | None = None,
    user_id: str | None = None,
    channel: str | None = "a2a",
    converter: str = CONVERTER,
    clock: Callable[[], str] = utc_now,
) -> E2AEnvelope:
    """SendMessage params (``{message, configuration?, metadata?}``) as an E2A envelope."""
    if not isinstance(params, Mapping):
        raise E2AFormatError("A2A SendMessage params must be a JSON object")
    raw_message = params.get("message")
    if not isinstance(raw_message, Mapping):
        raise E2AFormatError("A2A SendMessage: message is missing")
    message = read_message(raw_message)
    if not message.message_id:
        raise E2AFormatError("A2A SendMessage: message.messageId is missing")
    configuration = params.get("configuration")
    config = configuration if isinstance(configuration, Mapping) else {}
    modes = config.get("acceptedOutputModes", config.get("accepted_output_modes"))
    metadata = params.get("metadata")
    context_id = _text(raw_message, "contextId", "context_id")
    business: dict[str, Any] = {"message": dict(raw_message)}
    text = "".join(p.text for p in message.parts if p.kind == "text")
    if text:
        business["text"] = text
    blocks = [b for b in (_content_block(p) for p in message.parts) if b is not None]
    if blocks:
        business["content_blocks"] = blocks
    files = [_file_ref(p) for p in message.parts if p.kind == "file" and p.file_uri]
    if files:
        business["files"] = files
    now = clock()
    return E2AEnvelope(
        request_id=request_id or new_hex_id(),
        jsonrpc_id=jsonrpc_id,
        task_id=_text(raw_message, "taskId", "task_id"),
        context_id=context_id,
        # Sessions are A2A contexts (trpc-agent-go: context id = session id).
        session_id=context_id,
        message_id=message.message_id,
        timestamp=now,
        channel=channel,
        user_id=user_id,
        method=method,
        params=business,
        is_stream=method in _STREAMING_METHODS,
        expected_output_modes=[m for m in modes if isinstance(m, str)]
        if isinstance(modes, list)
        else [],
        a2a_metadata=dict(metadata) if isinstance(metadata, Mapping) else {},
        provenance=E2AProvenance(
            source_protocol=SOURCE_A2A,
            converter=converter,
            converted_at=now,
            details={"a2a_method": method},
        ),
    )


def _text(raw: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = raw.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _content_block(part: WirePart) -> dict[str, Any] | None:
    """One A2A part as an ACP content block (JSON)."""
    if part.kind == "text":
        return {"type": "text", "text": part.text}
    if part.kind == "data":
        return {
            "type": "text",
            "text": json.dumps(part.data, ensure_ascii=False, separators=(",", ":")),
        }
    mime = part.mime_type
    if part.file_base64 is not None:
        if mime.startswith(("image/", "audio/")):
            return {"type": mime.split("/", 1)[0], "mimeType": mime, "data": part.file_base64}
        resource: dict[str, Any] = {
            "uri": part.file_uri or f"a2a:{part.name or 'file'}",
            "blob": part.file_base64,
        }
        if mime:
            resource["mimeType"] = mime
        return {"type": "resource", "resource": resource}
    if part.file_uri:
        link: dict[str, Any] = {
            "type": "resource_link",
            "uri": part.file_uri,
            "name": part.name or part.file_uri,
        }
        if mime:
            link["mimeType"] = mime
        return link
    return None


def _file_ref(part: WirePart) -> dict[str, Any]:
    ref: dict[str, Any] = {"uri": part.file_uri}
    if part.name:
        ref["name"] = part.name
    if part.mime_type:
        ref["mime_type"] = part.mime_type
    return ref


def e2a_response_to_a2a_stream_payload(response: E2AResponse) -> dict[str, Any] | None:
    """A2A 1.0 ``StreamResponse`` JSON (one key) for ``a2a.stream_event``, ``a2a.task`` and
    ``a2a.message`` records; ``None`` for other kinds. The payload is checked against A2A's
    protobuf schema (both proto field names and JSON names are read) and written in 1.0
    JSON names; ``projections`` are never read (they are auxiliary, §12.1)."""
    kind, body = response.response_kind, response.body
    if kind == KIND_A2A_STREAM_EVENT:
        branch, payload = A2A_STREAM_BRANCHES[str(body["branch"])], body["payload"]
    elif kind == KIND_A2A_TASK:
        branch, payload = "task", body
    elif kind == KIND_A2A_MESSAGE:
        branch, payload = "message", body
    else:
        return None
    try:
        parsed = ParseDict({branch: payload}, StreamResponse())
    except ParseError as exc:
        raise E2AFormatError(f"{kind} body is not an A2A {branch}: {str(exc)[:200]}") from None
    out: dict[str, Any] = MessageToDict(parsed)
    return out
