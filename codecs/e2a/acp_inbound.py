"""ACP → E2A (docs/specs/e2a.md §8): a client's JSON-RPC call as an :class:`E2AEnvelope`, and an
ACP agent's ``session/update`` notifications and ``session/prompt`` answer as
:class:`E2AResponse` records.

The envelope keeps ACP's ``params`` exactly as they came (camelCase, ``_meta``), since E2A
``params`` are "the JSON-RPC params" (§4.4); ``session_id``, ``jsonrpc_id`` and ``acp_meta``
are lifted out of them. An ACP extension method (``_zed/…``, a leading underscore) is an
E2A ``ext`` call, its name in ``ext_method`` (§4.4). Params of the methods the ACP schema
types are validated first, so a malformed prompt is a typed error here, not a surprise in
the agent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from trpc_bridge.codecs.e2a.acp_schema import REQUEST_MODELS, update_model, validated
from trpc_bridge.codecs.e2a.constants import (
    ACP_EXTENSION_PREFIX,
    ACP_SESSION_PROMPT,
    ACP_SESSION_UPDATE,
    KIND_ACP_PROMPT_RESULT,
    KIND_ACP_SESSION_UPDATE,
    KIND_ERROR,
    METHOD_EXT,
    SOURCE_ACP,
    STATUS_FAILED,
    STATUS_SUCCEEDED,
)
from trpc_bridge.codecs.e2a.errors import E2AFormatError
from trpc_bridge.codecs.e2a.models import E2AEnvelope, E2AProvenance, E2AResponse, utc_now
from trpc_bridge.codecs.e2a.rules import ResponseSequencer
from trpc_bridge.names import new_hex_id

CONVERTER = "trpc-bridge"


def _jsonrpc(message: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(message, Mapping):
        raise E2AFormatError(f"{what} must be a JSON object, got {type(message).__name__}")
    version = message.get("jsonrpc", "2.0")
    if version != "2.0":
        raise E2AFormatError(f"{what}: jsonrpc must be '2.0', got {str(version)[:16]!r}")
    msg_id = message.get("id")
    if msg_id is not None and (isinstance(msg_id, bool) or not isinstance(msg_id, str | int)):
        raise E2AFormatError(f"{what}: id must be a string or an integer")
    return message


def _params(message: Mapping[str, Any], what: str) -> dict[str, Any]:
    params = message.get("params", {})
    if not isinstance(params, Mapping):
        raise E2AFormatError(f"{what}: params must be an object")
    return dict(params)


def envelope_from_acp_jsonrpc(
    message: Any,
    *,
    request_id: str | None = None,
    user_id: str | None = None,
    channel: str | None = "acp",
    converter: str = CONVERTER,
    clock: Callable[[], str] = utc_now,
) -> E2AEnvelope:
    """An ACP client → agent JSON-RPC request (or notification) as an E2A envelope."""
    msg = _jsonrpc(message, "ACP JSON-RPC message")
    method = msg.get("method")
    if not isinstance(method, str) or not method:
        raise E2AFormatError("ACP JSON-RPC message: method is missing")
    params = _params(msg, "ACP JSON-RPC message")
    model = REQUEST_MODELS.get(method)
    if model is not None:
        validated(model, params, f"ACP {method} params")
    update_kind = None
    if method == ACP_SESSION_UPDATE:
        update_kind = _update_kind(params)
    session_id = params.get("sessionId")
    meta = params.get("_meta")
    now = clock()
    details: dict[str, Any] = {"jsonrpc_method": method}
    if msg.get("id") is None:
        details["notification"] = True
    extension = method.startswith(ACP_EXTENSION_PREFIX)
    return E2AEnvelope(
        request_id=request_id or new_hex_id(),
        jsonrpc_id=msg.get("id"),
        session_id=session_id if isinstance(session_id, str) else None,
        timestamp=now,
        channel=channel,
        user_id=user_id,
        method=METHOD_EXT if extension else method,
        ext_method=method if extension else None,
        params=params,
        session_update_kind=update_kind,
        is_stream=method == ACP_SESSION_PROMPT,
        acp_meta=dict(meta) if isinstance(meta, Mapping) else {},
        provenance=E2AProvenance(
            source_protocol=SOURCE_ACP, converter=converter, converted_at=now, details=details
        ),
    )


def _update_kind(params: Mapping[str, Any]) -> str:
    update = params.get("update")
    kind = update.get("sessionUpdate") if isinstance(update, Mapping) else None
    if not isinstance(update, Mapping) or not isinstance(kind, str) or not kind:
        raise E2AFormatError("ACP session/update: update.sessionUpdate is missing")
    update_model(update)  # a known kind must be well formed; an unknown one passes
    return kind


def response_from_acp_session_update(
    notification: Any, sequencer: ResponseSequencer
) -> E2AResponse:
    """An ACP agent's ``session/update`` notification as the next ``acp.session_update``
    record of the request. Update kinds the installed ACP schema does not know are kept
    as they came, not refused."""
    msg = _jsonrpc(notification, "ACP session/update")
    if msg.get("method") != ACP_SESSION_UPDATE:
        raise E2AFormatError(f"not an ACP session/update: method {msg.get('method')!r}")
    params = _params(msg, "ACP session/update")
    _update_kind(params)
    return sequencer.emit(KIND_ACP_SESSION_UPDATE, params)


def response_from_acp_jsonrpc_response(answer: Any, sequencer: ResponseSequencer) -> E2AResponse:
    """An ACP agent's answer to ``session/prompt`` as the request's final record:
    ``acp.prompt_result`` for a result, ``acp.jsonrpc_error`` (failed) for an error."""
    msg = _jsonrpc(answer, "ACP JSON-RPC response")
    error = msg.get("error")
    if isinstance(error, Mapping):
        # §12.2: failed ⇒ e2a.error; the ACP error itself travels as its external payload.
        code = error.get("code")
        body = {
            "code": code if isinstance(code, int) and not isinstance(code, bool) else -32603,
            "message": str(error.get("message", "")),
            "external": {"protocol": "acp", "type": "jsonrpc_error", "payload": dict(error)},
        }
        return sequencer.emit(KIND_ERROR, body, status=STATUS_FAILED, is_final=True)
    result = msg.get("result")
    if not isinstance(result, Mapping):
        raise E2AFormatError("ACP JSON-RPC response: neither result nor error")
    return sequencer.emit(KIND_ACP_PROMPT_RESULT, result, status=STATUS_SUCCEEDED, is_final=True)
