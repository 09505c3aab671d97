"""Signed push notifications: a real webhook receiver checks every delivery's JWT against
the bridge's JWKS (``/.well-known/jwks.json``) with PyJWT's ``PyJWKClient`` — signature,
issuer, audience, expiry, task id, and the hash of the exact body bytes — while the
signing key is rotated under a running server."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from a2a.types import (
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trpc_bridge.agents.tck import tck_agent
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.http.listener import serving
from trpc_bridge.server.options import PushOptions, PushPolicy
from trpc_bridge.server.push.signing import BODY_HASH_CLAIM, JWT_HEADER
from trpc_bridge.server.signing.keys import SigningKey

from .helpers import as_user, sdk_client

#: What a receiver accepts: asymmetric algorithms only (never ``none`` or HMAC).
ALGORITHMS = ["ES256", "ES384", "RS256", "EdDSA"]


@dataclass
class VerifyingWebhook:
    """A webhook receiver that verifies each push before it accepts it (401 otherwise)."""

    jwks_url: str
    issuer: str
    url: str = ""
    verified: list[dict[str, Any]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    kids: list[str] = field(default_factory=list)
    client: jwt.PyJWKClient = field(init=False)

    def __post_init__(self) -> None:
        # Refetches at once on an unknown kid (the default waits 30 s between fetches,
        # which the key ring's publish-ahead covers; here the new key signs at once).
        self.client = jwt.PyJWKClient(self.jwks_url, cooldown_duration=0)

    async def check(self, token: str, body: bytes) -> dict[str, Any]:
        # PyJWKClient fetches with urllib (blocking): off the loop that serves the JWKS.
        key = await asyncio.to_thread(self.client.get_signing_key_from_jwt, token)
        claims: dict[str, Any] = jwt.decode(
            token,
            key.key,
            algorithms=ALGORITHMS,
            audience=self.url,
            issuer=self.issuer,
            options={"require": ["exp", "iat", "iss", "aud", "jti"]},
        )
        if claims[BODY_HASH_CLAIM] != hashlib.sha256(body).hexdigest():
            raise jwt.InvalidTokenError("body hash does not match")
        payload: dict[str, Any] = json.loads(body)
        (update,) = payload.values()
        task_id = update.get("taskId") or update.get("id")
        if claims["task_id"] != task_id:
            raise jwt.InvalidTokenError("task id does not match")
        self.kids.append(jwt.get_unverified_header(token)["kid"])
        return payload

    async def endpoint(self, request: Request) -> Response:
        body = await request.body()
        token = request.headers.get(JWT_HEADER.lower(), "")
        try:
            self.verified.append(await self.check(token, body))
        except jwt.PyJWTError as exc:
            self.refused.append(str(exc))
            return Response(status_code=401)
        return Response(status_code=200)

    def states(self) -> list[str]:
        return [p["statusUpdate"]["status"]["state"] for p in self.verified if "statusUpdate" in p]


@contextlib.asynccontextmanager
async def receiver(server: BridgeServer) -> AsyncIterator[VerifyingWebhook]:
    hook = VerifyingWebhook(server.jwks_url, server.base_url)
    app = Starlette(routes=[Route("/hook", hook.endpoint, methods=["POST"])])
    async with serving(app) as url:
        hook.url = f"{url}/hook"
        yield hook


def _pem(key: Any) -> bytes:
    return bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )


def _options(*, push_key: str = "", card_key: str = "") -> ServerOptions:
    push = PushOptions(policy=PushPolicy(allow_loopback=True), signing_key=push_key)
    return ServerOptions(push=push, card_signing_key=card_key)


async def _push_task(server: BridgeServer, hook: VerifyingWebhook, transport: str) -> str:
    client = await sdk_client(server.agent_card(), transport, streaming=False)
    message = Message(
        message_id=f"tck-stream-001-{uuid.uuid4()}", role=Role.ROLE_USER, parts=[Part(text="hi")]
    )
    config = SendMessageConfiguration(
        task_push_notification_config=TaskPushNotificationConfig(url=hook.url, token="tok")
    )
    request = SendMessageRequest(message=message, configuration=config)
    (answer,) = [r async for r in client.send_message(request, context=as_user("alice"))]
    await client.close()
    assert server.push is not None
    await server.push.flush()
    return str(answer.task.id)


@pytest.mark.parametrize("transport", ["jsonrpc-1.0", "grpc-1.0"])
async def test_every_push_carries_a_jwt_the_receiver_verifies_with_the_jwks(
    transport: str,
) -> None:
    async with BridgeServer(tck_agent(), _options()) as server, receiver(server) as hook:
        await _push_task(server, hook, transport)
        assert hook.refused == []
        assert hook.states()[-1] == "TASK_STATE_COMPLETED"
        assert len(hook.verified) >= 3
        # The JWKS is public, cacheable, and holds public keys only.
        async with httpx.AsyncClient() as http:
            answer = await http.get(server.jwks_url)
        assert answer.headers["cache-control"].startswith("public")
        keys = answer.json()["keys"]
        assert {k["kid"] for k in keys} >= set(hook.kids)
        assert all("d" not in k and k["use"] == "sig" for k in keys)


async def test_a_replaced_key_file_rotates_without_a_restart(tmp_path: Path) -> None:
    """The key file is replaced while the server runs: the next pushes are signed with the
    new key, the receiver finds it in the JWKS (refetched on the unknown kid), and a token
    the old key signed still verifies, since the old key stays published."""
    key_file = tmp_path / "push.pem"
    key_file.write_bytes(_pem(ec.generate_private_key(ec.SECP256R1())))
    async with (
        BridgeServer(tck_agent(), _options(push_key=str(key_file))) as server,
        receiver(server) as hook,
    ):
        assert server.push_keys is not None
        server.push_keys.check_every = 0  # look at the file on every signature
        server.push_keys.publish_ahead = 0  # and sign with a new key at once
        await _push_task(server, hook, "jsonrpc-1.0")
        first_kid = hook.kids[-1]
        signer = server.push.signer if server.push is not None else None
        assert signer is not None
        old_body = b'{"statusUpdate":{}}'
        old_token = signer.token(url=hook.url, task_id="t-old", body=old_body)

        replacement = tmp_path / "push.pem.new"
        replacement.write_bytes(
            _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048))
        )
        replacement.replace(key_file)  # an atomic swap, as a secret manager does it
        await _push_task(server, hook, "jsonrpc-1.0")

        assert hook.refused == []
        assert hook.kids[-1] != first_kid
        assert jwt.get_unverified_header(old_token)["kid"] == first_kid
        published = {k.kid for k in server.push_keys.published()}
        assert {first_kid, hook.kids[-1]} <= published
        key = await asyncio.to_thread(hook.client.get_signing_key_from_jwt, old_token)
        jwt.decode(old_token, key.key, algorithms=ALGORITHMS, audience=hook.url)


async def test_a_tampered_or_replayed_push_is_refused_by_the_receiver() -> None:
    async with BridgeServer(tck_agent(), _options()) as server, receiver(server) as hook:
        assert server.push is not None and server.push.signer is not None
        body = b'{"statusUpdate":{"taskId":"t-1"}}'
        token = server.push.signer.token(url=hook.url, task_id="t-1", body=body)
        # A token made for another webhook, replayed here.
        elsewhere = server.push.signer.token(
            url="https://other.example/hook", task_id="t-1", body=body
        )
        async with httpx.AsyncClient() as http:
            for sent, used in ((body.replace(b"t-1", b"t-2"), token), (body, elsewhere)):
                answer = await http.post(hook.url, content=sent, headers={JWT_HEADER: used})
                assert answer.status_code == 401
            forged = jwt.encode(  # signed by a key the JWKS does not hold, same kid
                jwt.decode(token, options={"verify_signature": False}),
                ed25519.Ed25519PrivateKey.generate(),
                algorithm="EdDSA",
                headers={"kid": jwt.get_unverified_header(token)["kid"]},
            )
            answer = await http.post(hook.url, content=body, headers={JWT_HEADER: forged})
            assert answer.status_code == 401
        assert len(hook.refused) == 3 and hook.verified == []


def test_an_unusable_key_file_is_refused_at_start(tmp_path: Path) -> None:
    from trpc_bridge.server.signing.keys import SigningKeyError

    weak = tmp_path / "weak.pem"
    weak.write_bytes(_pem(rsa.generate_private_key(public_exponent=65537, key_size=1024)))
    public = tmp_path / "public.pem"
    public.write_bytes(
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    for path, says in ((weak, "1024 bits"), (public, "no unencrypted PEM private key")):
        with pytest.raises(SigningKeyError, match=says) as caught:
            BridgeServer(tck_agent(), _options(push_key=str(path)))
        assert "BEGIN" not in str(caught.value)
    with pytest.raises(SigningKeyError, match="cannot read"):
        BridgeServer(tck_agent(), _options(card_key=str(tmp_path / "missing.pem")))


def test_key_ids_are_thumbprints() -> None:
    """RFC 7638 §3.1's example key has the thumbprint the RFC gives."""
    from trpc_bridge.server.signing.keys import thumbprint

    jwk = {
        "kty": "RSA",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L"
        "6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-"
        "65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNL"
        "yrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJz"
        "KnqDKgw",
        "e": "AQAB",
        "alg": "RS256",
    }
    assert thumbprint(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
    key = SigningKey.generate()
    assert key.kid == thumbprint(key.public()) and key.algorithm == "ES256"
