"""What the L2 ``body`` of each ``response_kind`` must hold (docs/specs/e2a.md §12.5), and
the one rule a single record can break on its own: ``status == failed`` ⇒ ``e2a.error``
(§12.2), or ``acp.jsonrpc_error``, the kind §12.5 / §12.6 allow at the ACP boundary (an ACP
error, as its JSON-RPC ``error``); either error kind is ``failed``.

Kinds this bridge does not know are accepted with any body: E2A 1.x may add kinds, and a
reader that refused them would break on a newer writer. Unknown *fields* in a known body
are accepted too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from trpc_bridge.codecs.e2a.constants import (
    A2A_STREAM_BRANCHES,
    DELTA_KINDS,
    KIND_A2A_STREAM_EVENT,
    KIND_ACP_JSONRPC_ERROR,
    KIND_ACP_PROMPT_RESULT,
    KIND_ACP_SESSION_UPDATE,
    KIND_CHUNK,
    KIND_COMPLETE,
    KIND_ERROR,
    KIND_EXT,
    STATUS_FAILED,
)
from trpc_bridge.codecs.e2a.errors import E2AFormatError, E2ARuleError

#: The kinds a ``failed`` record may have (§12.2, §12.6).
FAILED_KINDS = (KIND_ERROR, KIND_ACP_JSONRPC_ERROR)


def check_record(status: str, kind: str, body: Mapping[str, Any]) -> None:
    """Raise :class:`E2ARuleError` / :class:`E2AFormatError` when the record is inconsistent."""
    if status == STATUS_FAILED and kind not in FAILED_KINDS:
        raise E2ARuleError(
            f"status 'failed' requires response_kind 'e2a.error' (or 'acp.jsonrpc_error' "
            f"at the ACP boundary), got {kind!r}"
        )
    if kind in FAILED_KINDS and status != STATUS_FAILED:
        raise E2ARuleError(f"response_kind {kind!r} requires status 'failed', not {status!r}")
    check = _CHECKS.get(kind)
    if check is not None:
        check(body)


def _need(ok: bool, kind: str, what: str) -> None:
    if not ok:
        raise E2AFormatError(f"{kind} body: {what}")


def _chunk(body: Mapping[str, Any]) -> None:
    _need(
        body.get("delta_kind") in DELTA_KINDS,
        KIND_CHUNK,
        f"delta_kind must be one of {sorted(DELTA_KINDS)}",
    )
    _need(
        isinstance(body.get("delta"), str | dict | list),
        KIND_CHUNK,
        "delta must be text or a JSON object",
    )
    _need(isinstance(body.get("mime_type", ""), str), KIND_CHUNK, "mime_type must be text")


def _complete(body: Mapping[str, Any]) -> None:
    _need("result" in body, KIND_COMPLETE, "result is missing")


def _error(body: Mapping[str, Any]) -> None:
    code = body.get("code")
    _need(
        isinstance(code, str | int) and not isinstance(code, bool),
        KIND_ERROR,
        "code must be text or an integer",
    )
    _need(isinstance(body.get("message"), str), KIND_ERROR, "message must be text")
    external = body.get("external")
    if external is not None:
        _need(
            isinstance(external, Mapping)
            and external.get("protocol") in ("acp", "a2a")
            and isinstance(external.get("type"), str),
            KIND_ERROR,
            "external must be {protocol: acp|a2a, type, payload}",
        )


def _stream_event(body: Mapping[str, Any]) -> None:
    _need(
        body.get("branch") in A2A_STREAM_BRANCHES,
        KIND_A2A_STREAM_EVENT,
        f"branch must be one of {sorted(A2A_STREAM_BRANCHES)}",
    )
    _need(
        isinstance(body.get("payload"), Mapping), KIND_A2A_STREAM_EVENT, "payload must be an object"
    )


def session_update_of(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ACP update object of an ``acp.session_update`` body, which is either the
    ``session/update`` params (``{sessionId, update}``) or the update itself."""
    update = body.get("update", body)
    if isinstance(update, Mapping) and isinstance(update.get("sessionUpdate"), str):
        return update
    return None


def _session_update(body: Mapping[str, Any]) -> None:
    _need(
        session_update_of(body) is not None,
        KIND_ACP_SESSION_UPDATE,
        "no update with a sessionUpdate kind",
    )


def _prompt_result(body: Mapping[str, Any]) -> None:
    reason = body.get("stopReason", body.get("stop_reason"))
    _need(isinstance(reason, str), KIND_ACP_PROMPT_RESULT, "stopReason must be text")


def _jsonrpc_error(body: Mapping[str, Any]) -> None:
    code = body.get("code")
    _need(
        isinstance(code, int) and not isinstance(code, bool),
        KIND_ACP_JSONRPC_ERROR,
        "code must be an integer",
    )
    _need(isinstance(body.get("message"), str), KIND_ACP_JSONRPC_ERROR, "message must be text")


def _ext(body: Mapping[str, Any]) -> None:
    _need(isinstance(body.get("ext_method"), str), KIND_EXT, "ext_method must be text")


_CHECKS: dict[str, Callable[[Mapping[str, Any]], None]] = {
    KIND_CHUNK: _chunk,
    KIND_COMPLETE: _complete,
    KIND_ERROR: _error,
    KIND_A2A_STREAM_EVENT: _stream_event,
    KIND_ACP_SESSION_UPDATE: _session_update,
    KIND_ACP_PROMPT_RESULT: _prompt_result,
    KIND_ACP_JSONRPC_ERROR: _jsonrpc_error,
    KIND_EXT: _ext,
}
