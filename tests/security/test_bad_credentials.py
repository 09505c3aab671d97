# ruff: noqa: E501  (the table: one case per line)
"""The bad-credential table: every case on every transport gets its exact answer, the
server keeps serving, and nothing of a credential reaches the logs.

Transports: JSON-RPC, REST, AG-UI (HTTP), A2A gRPC and the AgentHost gRPC door. A case
that needs a query string (a credential in the URL) exists on HTTP only: gRPC has none.
Client certificates of another CA are refused by the TLS handshake (``test_tls.py``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx
import jwt
import pytest
import pytest_asyncio
from a2a.types import a2a_pb2, a2a_pb2_grpc
from agui_checks import run_input
from cryptography.hazmat.primitives import serialization
from security_peers import OidcPeer, b64url, new_key

from trpc_bridge.agents.scenarios import whoami
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.auth.options import SecurityOptions
from trpc_bridge.v1 import agent_pb2, agent_pb2_grpc

from .conftest import key_file

pytestmark = pytest.mark.asyncio(loop_scope="module")

HTTP = ("jsonrpc", "rest", "agui")
TRANSPORTS = (*HTTP, "grpc", "agenthost")
GOOD_KEY = "k-good-0123456789abcdef0123456789"
REMOVED_KEY = "k-removed-0123456789abcdef01234567"


@dataclass(frozen=True)
class Ask:
    """What a case sends: headers (repeatable) and a query string."""

    headers: list[tuple[str, str]] = field(default_factory=list)
    query: str = ""


@dataclass(frozen=True)
class Case:
    scheme: str  # "oidc" or "api-key"
    send: Callable[[OidcPeer], Ask]
    status: int  # 401, 403, 400
    message: str
    #: A 401 for a request that presented no credential: the challenge has no error.
    missing: bool = False
    http_only: bool = False


def _auth(value: str) -> Ask:
    return Ask([("authorization", value)])


def _token(make: Callable[[OidcPeer], str]) -> Callable[[OidcPeer], Ask]:
    return lambda idp: _auth(f"Bearer {make(idp)}")


def _unsigned(idp: OidcPeer) -> str:
    header = {"alg": "none", "typ": "JWT", "kid": idp.keys[0].kid}
    body = idp.claims()
    return f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(body).encode())}."


def _hs256_with_public_key(idp: OidcPeer) -> str:
    """HS256 keyed with the provider's public key (the classic algorithm confusion)."""
    public = (
        idp.keys[0]
        .private.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT", "kid": idp.keys[0].kid}).encode())
    body = b64url(json.dumps(idp.claims()).encode())
    mac = hmac.new(public, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{b64url(mac)}"


def _tampered(idp: OidcPeer) -> str:
    header, _, signature = idp.sign(idp.claims("alice")).split(".")
    return f"{header}.{b64url(json.dumps(idp.claims('admin')).encode())}.{signature}"


def _bad_signature(idp: OidcPeer) -> str:
    header, body, signature = idp.sign(idp.claims()).split(".")
    flipped = base64.urlsafe_b64decode(signature + "==")
    return f"{header}.{body}.{b64url(bytes([flipped[0] ^ 1]) + flipped[1:])}"


def _numeric_kid(idp: OidcPeer) -> str:
    """A signed token whose header's ``kid`` is a number (PyJWT would not write one)."""
    header = b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": 7}).encode())
    _, body, signature = idp.sign(idp.claims()).split(".")
    return f"{header}.{body}.{signature}"


def _foreign_key_same_kid(idp: OidcPeer) -> str:
    impostor = new_key("RS256")
    return jwt.encode(idp.claims(), impostor.private, "RS256", headers={"kid": idp.keys[0].kid})


def _now() -> int:
    return int(time.time())


INVALID = "the token is not a valid JWT"
CASES: dict[str, Case] = {
    # --- OIDC: no usable bearer token ---
    "no credential": Case("oidc", lambda idp: Ask(), 401, "a bearer token is required (Authorization: Bearer …)", missing=True),
    "empty bearer": Case("oidc", lambda idp: _auth("Bearer"), 401, "the bearer token is empty"),
    "basic credentials": Case("oidc", lambda idp: _auth("Basic YWxpY2U6cHc="), 401, "the Authorization header is not a bearer token"),
    "garbage": Case("oidc", lambda idp: _auth("Bearer garbage"), 401, INVALID),
    "two dots of garbage": Case("oidc", lambda idp: _auth("Bearer a.b.c"), 401, INVALID),
    "JWE-shaped (5 parts)": Case("oidc", lambda idp: _auth("Bearer a.b.c.d.e"), 401, INVALID),
    "token with trailing junk": Case("oidc", lambda idp: _auth(f"Bearer {idp.sign(idp.claims())} x"), 401, INVALID),
    "token too long": Case("oidc", lambda idp: _auth("Bearer " + "a" * 17000), 401, "the token is too long", http_only=True),
    # --- OIDC: claims ---
    "expired": Case("oidc", _token(lambda idp: idp.sign(idp.claims(exp=_now() - 120))), 401, "the token has expired"),
    "not yet valid": Case("oidc", _token(lambda idp: idp.sign(idp.claims(nbf=_now() + 120))), 401, "the token is not valid yet"),
    "wrong audience": Case("oidc", _token(lambda idp: idp.sign(idp.claims(aud="https://other.test"))), 401, "the token is not for this audience"),
    "no audience": Case("oidc", _token(lambda idp: idp.sign(idp.claims(aud=None))), 401, "the token lacks a required claim"),
    "wrong issuer": Case("oidc", _token(lambda idp: idp.sign(idp.claims(iss="https://evil.test"))), 401, "the token is not from the configured issuer"),
    "no issuer": Case("oidc", _token(lambda idp: idp.sign(idp.claims(iss=None))), 401, "the token lacks a required claim"),
    "no expiry": Case("oidc", _token(lambda idp: idp.sign(idp.claims(exp=None))), 401, "the token lacks a required claim"),
    "expiry not a number": Case("oidc", _token(lambda idp: idp.sign(idp.claims(exp="never"))), 401, INVALID),
    # --- OIDC: keys and algorithms ---
    "unknown kid": Case("oidc", _token(lambda idp: idp.sign(idp.claims(), key=new_key("RS256"))), 401, "the token is signed with a key the issuer does not publish"),
    "kid not a string": Case("oidc", _token(_numeric_kid), 401, INVALID),
    "alg none": Case("oidc", _token(_unsigned), 401, "the token's algorithm is not accepted"),
    "HS256 signed with the public key": Case("oidc", _token(_hs256_with_public_key), 401, "the token's algorithm is not accepted"),
    "tampered payload": Case("oidc", _token(_tampered), 401, "the token's signature is not valid"),
    "tampered signature": Case("oidc", _token(_bad_signature), 401, "the token's signature is not valid"),
    "another key under the same kid": Case("oidc", _token(_foreign_key_same_kid), 401, "the token's signature is not valid"),
    # --- OIDC: verified, but no one the bridge can serve ---
    "empty subject": Case("oidc", _token(lambda idp: idp.sign(idp.claims(""))), 403, "the token's sub claim names no user"),
    "subject not a string": Case("oidc", _token(lambda idp: idp.sign(idp.claims(sub=42))), 401, "the token's subject (sub) is not a string"),
    "issued in the future": Case("oidc", _token(lambda idp: idp.sign(idp.claims(iat=_now() + 3600))), 401, "the token is not valid yet"),
    "user claim missing": Case("oidc", _token(lambda idp: idp.sign(idp.claims(sub=None))), 403, "the token's sub claim names no user"),
    "subject too long": Case("oidc", _token(lambda idp: idp.sign(idp.claims("u" * 300))), 403, "the token's sub claim names a user longer than 255 characters"),
    # --- every scheme: credentials sent the wrong way ---
    "two Authorization headers": Case("oidc", lambda idp: Ask([("authorization", f"Bearer {idp.token()}"), ("authorization", "Bearer x")]), 400, "the authorization header is sent more than once"),
    "two X-User-ID headers": Case("oidc", lambda idp: Ask([("authorization", f"Bearer {idp.token()}"), ("x-user-id", "a"), ("x-user-id", "b")]), 400, "the x-user-id header is sent more than once"),
    "token in the query string": Case("oidc", lambda idp: Ask(query=f"access_token={idp.token()}"), 400, "a credential in the URL (access_token) is refused: send it in the Authorization header", http_only=True),
    "token in header and query": Case("oidc", lambda idp: Ask([("authorization", f"Bearer {idp.token()}")], f"access_token={idp.token()}"), 400, "a credential in the URL (access_token) is refused: send it in the Authorization header", http_only=True),
    # --- API keys ---
    "no API key": Case("api-key", lambda idp: Ask(), 401, "an API key is required (X-API-Key)", missing=True),
    "wrong API key": Case("api-key", lambda idp: Ask([("x-api-key", "k-wrong-0123456789abcdef0123456789")]), 401, "the API key is not valid"),
    "a removed API key": Case("api-key", lambda idp: Ask([("x-api-key", REMOVED_KEY)]), 401, "the API key is not valid"),
    "API key in both headers": Case("api-key", lambda idp: Ask([("x-api-key", GOOD_KEY), ("authorization", f"Bearer {GOOD_KEY}")]), 400, "send the API key once: X-API-Key or Authorization"),
    "two X-API-Key headers": Case("api-key", lambda idp: Ask([("x-api-key", GOOD_KEY), ("x-api-key", GOOD_KEY)]), 400, "the x-api-key header is sent more than once"),
    "API key in the query string": Case("api-key", lambda idp: Ask([("x-api-key", GOOD_KEY)], f"api_key={GOOD_KEY}"), 400, "a credential in the URL (api_key) is refused: send it in the Authorization header", http_only=True),
}  # fmt: skip

# --- servers ----------------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api_key_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BridgeServer]:
    path = key_file(
        tmp_path_factory.mktemp("keys") / "keys.txt", {GOOD_KEY: "carol", REMOVED_KEY: "dave"}
    )
    options = ServerOptions(security=SecurityOptions(auth="api-key", api_keys=str(path)))
    async with BridgeServer(whoami, options) as server:
        # The key is withdrawn while the server runs: no restart.
        before = await _send(server, "rest", Ask([("x-api-key", REMOVED_KEY)]))
        assert "user=dave" in before[2]
        key_file(Path(path), {GOOD_KEY: "carol"})
        yield server


# --- one request per transport, its answer normalised -----------------------------------


def _message(i: str) -> dict[str, Any]:
    return {"messageId": f"m-{i}", "role": "ROLE_USER", "parts": [{"text": "hi"}]}


async def _send(server: BridgeServer, transport: str, ask: Ask) -> tuple[Any, str, str]:
    """``(status or gRPC code, challenge, body text)``."""
    if transport in HTTP:
        url, body = {
            "jsonrpc": (
                server.jsonrpc_url,
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "SendMessage",
                    "params": {"message": _message("j")},
                },
            ),
            "rest": (f"{server.rest_url}/message:send", {"message": _message("r")}),
            "agui": (server.agui_url, run_input()),
        }[transport]
        if ask.query:
            url = f"{url}?{ask.query}"
        headers = [("a2a-version", "1.0"), ("content-type", "application/json"), *ask.headers]
        async with httpx.AsyncClient(timeout=30) as http:
            response = await http.post(url, content=json.dumps(body).encode(), headers=headers)
        return response.status_code, response.headers.get("www-authenticate", ""), response.text
    async with grpc.aio.insecure_channel(server.grpc_address) as channel:
        try:
            if transport == "grpc":
                stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
                request = a2a_pb2.SendMessageRequest()
                request.message.message_id = "m-g"
                request.message.role = a2a_pb2.ROLE_USER
                request.message.parts.add().text = "hi"
                answer = str(await stub.SendMessage(request, metadata=ask.headers))
            else:
                host = agent_pb2_grpc.AgentHostStub(channel)  # type: ignore[no-untyped-call]
                run = host.Run(agent_pb2.AgentRequest(text="hi"), metadata=ask.headers)
                answer = str([event async for event in run])
        except grpc.aio.AioRpcError as exc:
            challenge = dict(exc.trailing_metadata() or ()).get("www-authenticate", "")
            return exc.code(), str(challenge), exc.details() or ""
    return grpc.StatusCode.OK, "", answer


# --- the expected answers, written out per transport --------------------------------------

_JSONRPC_CODE = {401: -32000, 403: -32000, 400: -32600}
_STATUS_NAME = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 400: "INVALID_ARGUMENT"}
_REASON = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 400: "INVALID_REQUEST"}
_GRPC = {
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    400: grpc.StatusCode.INVALID_ARGUMENT,
}


def _challenge(case: Case) -> str:
    if case.status != 401:
        return ""
    if case.scheme == "api-key":
        return 'APIKey realm="trpc-bridge", in="header", name="X-API-Key"'
    if case.missing:
        return 'Bearer realm="trpc-bridge"'
    return f'Bearer realm="trpc-bridge", error="invalid_token", error_description="{case.message}"'


def _expected(case: Case, transport: str) -> tuple[Any, str, Any]:
    info = {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": _REASON[case.status],
        "domain": "trpc-bridge",
    }
    if transport == "jsonrpc":
        error = {"code": _JSONRPC_CODE[case.status], "message": case.message, "data": [info]}
        body: Any = {"jsonrpc": "2.0", "id": None, "error": error}
    elif transport == "rest":
        status = _STATUS_NAME[case.status]
        error = {"code": case.status, "status": status, "message": case.message, "details": [info]}
        body = {"error": error}
    elif transport == "agui":
        body = {"error": case.message}
    else:
        return _GRPC[case.status], _challenge(case), case.message
    return case.status, _challenge(case), body


PARAMS = [
    pytest.param(name, transport, id=f"{name} / {transport}")
    for name, case in CASES.items()
    for transport in (HTTP if case.http_only else TRANSPORTS)
]


async def test_the_table_has_at_least_thirty_cases() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize(("name", "transport"), PARAMS)
async def test_bad_credential(
    name: str,
    transport: str,
    idp: OidcPeer,
    oidc_server: BridgeServer,
    api_key_server: BridgeServer,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    case = CASES[name]
    server = oidc_server if case.scheme == "oidc" else api_key_server
    ask = case.send(idp)
    status, challenge, text = await _send(server, transport, ask)
    expected_status, expected_challenge, expected_body = _expected(case, transport)
    assert (status, challenge) == (expected_status, expected_challenge)
    assert (json.loads(text) if transport in HTTP else text) == expected_body
    # The server keeps serving: the same transport, a good credential.
    good = (
        Ask([("authorization", f"Bearer {idp.token('alice')}")])
        if case.scheme == "oidc"
        else Ask([("x-api-key", GOOD_KEY)])
    )
    ok = await _send(server, transport, good)
    assert ok[0] in (200, grpc.StatusCode.OK) and ("user=alice" in ok[2] or "user=carol" in ok[2])
    # Nothing of the credential in the logs (the refusal line, when the rate limit lets it
    # through, says only why).
    out, err = capfd.readouterr()
    # (httpx and httpcore are this test's own client: they log the URL it asked for.)
    server_side = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))]
    logged = "\n".join([out, err, *(r.getMessage() for r in server_side)])
    for _, value in ask.headers:
        secret = value.removeprefix("Bearer ").strip()
        if len(secret) >= 16:
            for piece in (secret, *secret.split(".")):
                if len(piece) >= 16:
                    assert piece not in logged, name
    for _, value in (pair.split("=", 1) for pair in ask.query.split("&") if "=" in pair):
        assert value not in logged
