"""E2A → ACP (docs/specs/e2a.md §7, §8, §12.6): an envelope as an ACP JSON-RPC call, and responses
as ACP ``session/update`` notifications and the JSON-RPC answer to ``session/prompt``.

Everything sent is built from, or checked against, the ``agent-client-protocol`` models,
so it is valid ACP for the installed schema: ``session/prompt`` params come out with
``sessionId`` (the E2A document's example, docs/specs/e2a.md §11.4, prints
``session_id``, a key ACP agents do not read — the E2A-level
:func:`merge_params_to_acp_prompt` still writes it, as §7 says, and the call maps it to
``sessionId``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from acp import schema

from trpc_bridge.codecs.e2a.acp_schema import SessionUpdate, to_json, update_model, validated
from trpc_bridge.codecs.e2a.bodies import session_update_of
from trpc_bridge.codecs.e2a.constants import (
    ACP_SESSION_PROMPT,
    ACP_SESSION_UPDATE,
    CUSTOM_CODE,
    CUSTOM_CODE_RESULT,
    DELTA_REASONING,
    DELTA_TEXT,
    DELTA_TOOL,
    ERROR_CANCELLED,
    KIND_ACP_JSONRPC_ERROR,
    KIND_ACP_PROMPT_RESULT,
    KIND_ACP_SESSION_UPDATE,
    KIND_CHUNK,
    KIND_COMPLETE,
    KIND_ERROR,
    METHOD_EXT,
    TOOL_CALL,
    TOOL_RESULT,
)
from trpc_bridge.codecs.e2a.errors import E2AFormatError
from trpc_bridge.codecs.e2a.models import E2AEnvelope, E2AResponse

#: JSON-RPC "internal error": an ``e2a.error`` whose code is not a JSON-RPC integer.
INTERNAL_ERROR = -32603
_TEXT_KEYS = ("text", "content", "query")


def merge_params_to_acp_prompt(envelope: E2AEnvelope) -> dict[str, Any]:
    """docs/specs/e2a.md §7: for ``session/prompt``, ``params`` completed into ACP prompt params.

    1. an existing ``prompt`` is kept; 2. else a non-empty ``content_blocks`` list becomes
    the prompt; 3. else the first non-empty ``text`` / ``content`` / ``query`` string
    becomes one text block; 4. the envelope's ``session_id`` is written when params have
    no session id (``session_id`` or ACP's ``sessionId``); 5. ``acp_meta`` is merged into
    ``_meta``. Any other method: a shallow copy of ``params``.
    """
    params = dict(envelope.params)
    if envelope.method != ACP_SESSION_PROMPT:
        return params
    if "prompt" not in params:
        blocks = params.get("content_blocks")
        if isinstance(blocks, list) and blocks:
            params["prompt"] = list(blocks)
        else:
            text = next(
                (params[k] for k in _TEXT_KEYS if isinstance(params.get(k), str) and params[k]),
                None,
            )
            if text is not None:
                params["prompt"] = [{"type": "text", "text": text}]
    if envelope.session_id and "session_id" not in params and "sessionId" not in params:
        params["session_id"] = envelope.session_id
    if envelope.acp_meta:
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, Mapping) else {}), **envelope.acp_meta}
    return params


def envelope_to_acp_jsonrpc_call(envelope: E2AEnvelope) -> dict[str, Any]:
    """The envelope as one ACP JSON-RPC request (a notification when it has no
    ``jsonrpc_id``). ``provenance`` is not touched. ``session/prompt`` params are validated
    as ACP ``PromptRequest`` and written in ACP's own keys; an ``ext`` call goes out under
    its ``ext_method``; other methods' params pass as they are — a gateway method such as
    ``chat.send`` must be mapped by its caller (§2)."""
    if not envelope.method:
        raise E2AFormatError("E2A envelope: no method to call")
    method = envelope.method
    if method == METHOD_EXT:
        if not envelope.ext_method:
            raise E2AFormatError("E2A envelope: an ext call without ext_method")
        method = envelope.ext_method
    params = merge_params_to_acp_prompt(envelope)
    if envelope.method == ACP_SESSION_PROMPT:
        params = to_json(validated(schema.PromptRequest, params, "ACP session/prompt params"))
    call: dict[str, Any] = {"jsonrpc": "2.0"}
    if envelope.jsonrpc_id is not None:
        call["id"] = envelope.jsonrpc_id
    call["method"] = method
    call["params"] = params
    return call


# --- responses → the answer to session/prompt -----------------------------------------


def e2a_response_to_acp_jsonrpc_response(response: E2AResponse) -> dict[str, Any] | None:
    """The JSON-RPC answer a response stands for (``result`` or ``error``), or ``None``
    for records that are not one (chunks, updates, other protocols' kinds).

    ``e2a.complete`` answers ``stopReason: end_turn`` (or the ``stopReason`` its result
    names); an ``e2a.error`` with code ``cancelled`` answers ``stopReason: cancelled``, as
    ACP wants after ``session/cancel``; any other ``e2a.error`` is a JSON-RPC error.
    """
    kind, body = response.response_kind, response.body
    if kind == KIND_ACP_PROMPT_RESULT:
        return _answer(response, result=to_json(validated(schema.PromptResponse, body, kind)))
    if kind == KIND_ACP_JSONRPC_ERROR:
        return _answer(response, error=dict(body))
    if kind == KIND_COMPLETE:
        result = body.get("result")
        reason = result.get("stopReason") if isinstance(result, Mapping) else None
        return _answer(response, result=_prompt_result(response, reason or "end_turn"))
    if kind == KIND_ERROR:
        if body.get("code") == ERROR_CANCELLED:
            return _answer(response, result=_prompt_result(response, "cancelled"))
        return _answer(response, error=_jsonrpc_error(body))
    return None


def _answer(response: E2AResponse, **outcome: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": response.jsonrpc_id, **outcome}


def _prompt_result(response: E2AResponse, reason: Any) -> dict[str, Any]:
    payload = {"stopReason": reason, "_meta": response.acp_meta or None}
    return to_json(validated(schema.PromptResponse, payload, "ACP prompt result"))


def _jsonrpc_error(body: Mapping[str, Any]) -> dict[str, Any]:
    code = body.get("code")
    data: dict[str, Any] = {}
    for key in ("details", "external"):
        if body.get(key) is not None:
            data[key] = body[key]
    if not isinstance(code, int):
        data["e2a_code"] = code
        code = INTERNAL_ERROR
    error: dict[str, Any] = {"code": code, "message": str(body.get("message", ""))}
    if data:
        error["data"] = data
    return error


# --- responses → session/update --------------------------------------------------------


def e2a_response_to_acp_update(response: E2AResponse) -> SessionUpdate | None:
    """The typed ACP ``session/update`` update a response stands for, or ``None``.

    Text chunks → ``agent_message_chunk``, reasoning → ``agent_thought_chunk`` (both with
    ``messageId`` = the response's ``message_id``); a tool call → ``tool_call``
    (``in_progress``, arguments as ``rawInput``), its result → ``tool_call_update``
    (``completed``); code → ``tool_call`` of kind ``execute``, its output → the
    ``tool_call_update`` that completes it; an ``acp.session_update`` record → its update,
    when the installed schema knows the kind. Everything else (state deltas, completion,
    errors, unknown kinds) has no update.
    """
    kind, body = response.response_kind, response.body
    if kind == KIND_ACP_SESSION_UPDATE:
        update = session_update_of(body)
        return update_model(update) if update is not None else None
    if kind != KIND_CHUNK:
        return None
    delta, delta_kind = body.get("delta"), body.get("delta_kind")
    if delta_kind in (DELTA_TEXT, DELTA_REASONING):
        text = delta if isinstance(delta, str) else json.dumps(delta, ensure_ascii=False)
        block = schema.TextContentBlock(type="text", text=text)
        if delta_kind == DELTA_TEXT:
            return schema.AgentMessageChunk(
                session_update="agent_message_chunk", content=block, message_id=response.message_id
            )
        return schema.AgentThoughtChunk(
            session_update="agent_thought_chunk", content=block, message_id=response.message_id
        )
    if isinstance(delta, Mapping):
        return _structured_update(str(delta_kind), delta)
    return None


def _structured_update(delta_kind: str, delta: Mapping[str, Any]) -> SessionUpdate | None:
    kind, call_id = delta.get("type"), str(delta.get("id") or "")
    if not call_id:
        return None
    if delta_kind == DELTA_TOOL and kind == TOOL_CALL:
        arguments = _json_or_text(delta.get("arguments"))
        return _started(call_id, str(delta.get("name") or "tool"), arguments)
    if delta_kind == DELTA_TOOL and kind == TOOL_RESULT:
        content = str(delta.get("content") or "")
        return _completed(call_id, _json_or_text(content), content)
    if kind == CUSTOM_CODE:
        code = str(delta.get("code") or "")
        return _started(call_id, "Run code", {"code": code}, kind="execute", text=code)
    if kind == CUSTOM_CODE_RESULT:
        output = str(delta.get("output") or "")
        return _completed(call_id, {"output": output}, output)
    return None


def _started(
    call_id: str, title: str, raw_input: Any, *, kind: Any = None, text: str | None = None
) -> schema.ToolCallStart:
    return schema.ToolCallStart(
        session_update="tool_call",
        tool_call_id=call_id,
        title=title,
        kind=kind,
        status="in_progress",
        raw_input=raw_input,
        content=None if text is None else [_text_content(text)],
    )


def _completed(call_id: str, raw_output: Any, text: str) -> schema.ToolCallProgress:
    return schema.ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=call_id,
        status="completed",
        raw_output=raw_output,
        content=[_text_content(text)],
    )


def _text_content(text: str) -> schema.ContentToolCallContent:
    return schema.ContentToolCallContent(
        type="content", content=schema.TextContentBlock(type="text", text=text)
    )


def _json_or_text(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def e2a_response_to_acp_notification(response: E2AResponse) -> dict[str, Any] | None:
    """The ``session/update`` notification (JSON-RPC) for a response, or ``None``.

    An ``acp.session_update`` record whose kind this schema does not know is passed on as
    it came (tolerated, not validated)."""
    update = e2a_response_to_acp_update(response)
    if update is not None:
        update_json = to_json(update)
    elif response.response_kind == KIND_ACP_SESSION_UPDATE:
        raw = session_update_of(response.body)
        if raw is None:
            return None
        update_json = dict(raw)
    else:
        return None
    session_id = response.session_id or response.body.get("sessionId")
    if not isinstance(session_id, str) or not session_id:
        raise E2AFormatError("a session/update needs the response's session_id")
    return {
        "jsonrpc": "2.0",
        "method": ACP_SESSION_UPDATE,
        "params": {"sessionId": session_id, "update": update_json},
    }
