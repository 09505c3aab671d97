"""How each door says no: one refusal (:class:`~.errors.AuthError`), its answer per wire.

========================  =====  ====================  ==============  =================
refusal                   HTTP   gRPC                  JSON-RPC code   ErrorInfo reason
========================  =====  ====================  ==============  =================
``Unauthenticated``       401    ``UNAUTHENTICATED``   -32000          UNAUTHENTICATED
``Forbidden``             403    ``PERMISSION_DENIED`` -32000          PERMISSION_DENIED
``CredentialMisuse``      400    ``INVALID_ARGUMENT``  -32600          INVALID_REQUEST
``Unavailable``           503    ``UNAVAILABLE``       -32603          UNAVAILABLE
========================  =====  ====================  ==============  =================

A2A 1.0 gives authentication and authorization errors no JSON-RPC code ("JSON-RPC custom
error", §3.3.2; a2a-sdk defines none either), and keeps -32001…-32099 for its own error
types (§9.5), which it numbers in sequence. Of JSON-RPC's implementation-defined server
errors (-32000…-32099) that leaves -32000: both refusals use it, and tell themselves apart
as A2A 1.0 errors do, by the ``ErrorInfo`` reason (and the HTTP status). The HTTP status
is the answer's first word on every HTTP door (JSON-RPC included), and a 401 always
carries ``WWW-Authenticate``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import grpc

from trpc_bridge.server.auth.errors import (
    AuthError,
    CredentialMisuse,
    Forbidden,
    Unauthenticated,
    Unavailable,
)

#: The ``domain`` of the ``google.rpc.ErrorInfo`` these answers carry (not A2A's errors).
DOMAIN = "trpc-bridge"
#: The JSON-RPC code of both refusals (see the module doc).
JSONRPC_REFUSED = -32000


@dataclass(frozen=True)
class Answer:
    http_status: int
    grpc_code: grpc.StatusCode
    jsonrpc_code: int
    reason: str


_ANSWERS: dict[type[AuthError], Answer] = {
    Unauthenticated: Answer(
        401, grpc.StatusCode.UNAUTHENTICATED, JSONRPC_REFUSED, "UNAUTHENTICATED"
    ),
    Forbidden: Answer(403, grpc.StatusCode.PERMISSION_DENIED, JSONRPC_REFUSED, "PERMISSION_DENIED"),
    CredentialMisuse: Answer(400, grpc.StatusCode.INVALID_ARGUMENT, -32600, "INVALID_REQUEST"),
    Unavailable: Answer(503, grpc.StatusCode.UNAVAILABLE, -32603, "UNAVAILABLE"),
}


def answer(refusal: AuthError) -> Answer:
    return _ANSWERS.get(type(refusal), _ANSWERS[Unauthenticated])


def _error_info(reason: str) -> dict[str, object]:
    return {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": DOMAIN}


def jsonrpc_body(refusal: AuthError) -> bytes:
    """A JSON-RPC 2.0 error response (``id`` null: the body is not read before the caller
    is let in)."""
    found = answer(refusal)
    error = {
        "code": found.jsonrpc_code,
        "message": refusal.message,
        "data": [_error_info(found.reason)],
    }
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()


def rest_body(refusal: AuthError) -> bytes:
    """An AIP-193 error, as the REST binding writes every error."""
    found = answer(refusal)
    error = {
        "code": found.http_status,
        "status": found.grpc_code.name,
        "message": refusal.message,
        "details": [_error_info(found.reason)],
    }
    return json.dumps({"error": error}).encode()


def plain_body(refusal: AuthError) -> bytes:
    """``{"error": "…"}``: AG-UI's error body (as for its other refusals)."""
    return json.dumps({"error": refusal.message}).encode()
