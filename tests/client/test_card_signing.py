"""Signed agent cards: a bridge started with a card signing key serves every form of its
card signed; a2a-sdk's own resolver and verifier accept each (keys from the bridge's
JWKS), and so does ``RemoteAgent`` with a pinned key or the JWKS URL; a card that is not
signed, signed by another key, or changed after signing is refused with a clear error.
Replacing the key file rotates the card key under the running server."""

from __future__ import annotations

import base64
import copy
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver
from a2a.client.card_resolver import parse_agent_card
from a2a.client.errors import AgentCardResolutionError
from a2a.utils.signing import create_signature_verifier
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt import PyJWK
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.client import RemoteAgent, RemoteAgentError
from trpc_bridge.client.card_trust import ALGORITHMS, CardTrust
from trpc_bridge.events import AgentRequest
from trpc_bridge.names import CARD_PATHS
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.a2a.card_signing import CARD_KEY_KEPT
from trpc_bridge.server.http.listener import serving
from trpc_bridge.server.signing.keys import SigningKey

KEYS = {
    "rsa": lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
    "ec": lambda: ec.generate_private_key(ec.SECP256R1()),
    "ed25519": ed25519.Ed25519PrivateKey.generate,
}


def _write_private(path: Path, key: Any) -> str:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(path)


def _write_public(path: Path, key: Any) -> str:
    path.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return str(path)


@asynccontextmanager
async def signed_bridge(tmp_path: Path, key: Any) -> AsyncIterator[BridgeServer]:
    options = ServerOptions(card_signing_key=_write_private(tmp_path / "card.pem", key))
    async with BridgeServer(demo_agent(), options) as server:
        yield server


async def _sdk_verifier(http: httpx.AsyncClient, jwks_url: str) -> Any:
    keys = {k["kid"]: PyJWK(k) for k in (await http.get(jwks_url)).json()["keys"]}
    return create_signature_verifier(lambda kid, jku: keys[kid or ""], ALGORITHMS)


@pytest.mark.parametrize("kind", sorted(KEYS))
async def test_every_form_of_the_card_verifies_with_a2a_sdk(tmp_path: Path, kind: str) -> None:
    async with signed_bridge(tmp_path, KEYS[kind]()) as server, httpx.AsyncClient() as http:
        verifier = await _sdk_verifier(http, server.jwks_url)
        resolver = A2ACardResolver(http, server.base_url)
        forms = [
            (CARD_PATHS[0], {}),  # the 1.0 card with gRPC (TCK, trpc-agent-go)
            (CARD_PATHS[0], {"A2A-Version": "1.0"}),  # without gRPC (a2a-sdk 1.x)
            (CARD_PATHS[0], {"A2A-Version": "0.3"}),  # with the 0.3 fields
            (CARD_PATHS[1], {}),  # agent.json
        ]
        signed = set()
        for path, headers in forms:
            card = await resolver.get_agent_card(
                path, http_kwargs={"headers": headers}, signature_verifier=verifier
            )
            (signature,) = card.signatures
            signed.add(signature.signature)
            protected = json.loads(base64.urlsafe_b64decode(signature.protected + "=="))
            assert protected["jku"] == server.jwks_url and protected["typ"] == "JOSE"
        assert len(signed) >= 2  # the public card is another card, with its own signature

        # The extended card (GetExtendedAgentCard) is signed too.
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
        answer = await http.post(server.jsonrpc_url, json=body, headers={"A2A-Version": "1.0"})
        verifier(parse_agent_card(answer.json()["result"]))


async def test_remote_agent_takes_a_signed_card_with_a_pinned_key_or_the_jwks(
    tmp_path: Path,
) -> None:
    key = KEYS["ec"]()
    async with signed_bridge(tmp_path, key) as server:
        pinned = CardTrust.from_file(_write_public(tmp_path / "card.pub", key))
        for trust in (pinned, CardTrust(jwks_url=server.jwks_url)):
            async with await RemoteAgent.connect(server.base_url, card_trust=trust) as agent:
                events = [e async for e in agent.run(AgentRequest(text="hi"))]
                assert events and events[-1].error is None
            # gRPC is on the extended card only, which is checked too.
            async with await RemoteAgent.connect(
                server.base_url, transport="grpc", card_trust=trust
            ) as agent:
                assert agent.endpoint.binding == "GRPC"
        jwks = tmp_path / "jwks.json"
        async with httpx.AsyncClient() as http:
            jwks.write_text((await http.get(server.jwks_url)).text)
        async with await RemoteAgent.connect(server.base_url, card_trust=CardTrust.from_file(jwks)):
            pass


async def test_a_card_signed_by_another_key_unsigned_or_changed_is_refused(
    tmp_path: Path,
) -> None:
    key = KEYS["rsa"]()
    async with signed_bridge(tmp_path, key) as server, httpx.AsyncClient() as http:
        stranger = CardTrust.from_file(_write_public(tmp_path / "other.pub", KEYS["rsa"]()))
        with pytest.raises(RemoteAgentError, match="no signature that verifies") as caught:
            await RemoteAgent.connect(server.base_url, card_trust=stranger)
        assert "signed by kid" in str(caught.value)

        # The same card, changed after it was signed (another URL: a hijacked card),
        # then with its signatures removed, served by someone else.
        card = (await http.get(server.card_url)).json()
        changed = copy.deepcopy(card)
        changed["supportedInterfaces"][0]["url"] = "http://attacker.example/"
        unsigned = {k: v for k, v in card.items() if k != "signatures"}
        trust = CardTrust(jwks_url=server.jwks_url)
        for served, says in ((changed, "no signature that verifies"), (unsigned, "not signed")):
            app = Starlette(routes=[Route(CARD_PATHS[0], lambda _, c=served: JSONResponse(c))])
            async with serving(app) as fake:
                with pytest.raises(RemoteAgentError, match=says):
                    await RemoteAgent.connect(fake, card_trust=trust)
                # a2a-sdk's resolver refuses it as well.
                verifier = await _sdk_verifier(http, server.jwks_url)
                with pytest.raises(Exception) as sdk_refusal:
                    await A2ACardResolver(http, fake).get_agent_card(signature_verifier=verifier)
                assert not isinstance(sdk_refusal.value, AgentCardResolutionError)


async def test_an_unusable_card_key_file_is_a_clear_error(tmp_path: Path) -> None:
    private = _write_private(tmp_path / "private.pem", KEYS["ec"]())
    garbage = tmp_path / "garbage.json"
    garbage.write_text('{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}')
    for path in (private, garbage, tmp_path / "missing"):
        with pytest.raises(RemoteAgentError, match=r"card key|private key") as caught:
            CardTrust.from_file(path)
        assert "BEGIN" not in str(caught.value)


class Clock:
    """The card key ring's clock, moved by the test (no waiting)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def _kids_signing(http: httpx.AsyncClient, server: BridgeServer) -> set[str]:
    """The kid of every served form of the card (extended card included), each verified
    by a2a-sdk's resolver and verifier against the JWKS as fetched now."""
    verifier = await _sdk_verifier(http, server.jwks_url)
    resolver = A2ACardResolver(http, server.base_url)
    cards = [
        await resolver.get_agent_card(
            path, http_kwargs={"headers": headers}, signature_verifier=verifier
        )
        for path, headers in ((CARD_PATHS[0], {}), (CARD_PATHS[0], {"A2A-Version": "1.0"}))
    ]
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
    answer = await http.post(server.jsonrpc_url, json=body, headers={"A2A-Version": "1.0"})
    cards.append(parse_agent_card(answer.json()["result"]))
    verifier(cards[-1])
    return {
        json.loads(base64.urlsafe_b64decode(s.protected + "=="))["kid"]
        for card in cards
        for s in card.signatures
    }


async def _accepts(server: BridgeServer, trust: CardTrust) -> bool:
    try:
        async with await RemoteAgent.connect(server.base_url, card_trust=trust):
            return True
    except RemoteAgentError as exc:
        assert "no signature that verifies" in str(exc)
        return False


async def test_a_replaced_card_key_file_rotates_without_a_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Publish first, then sign: the new key is in the JWKS as soon as the file is read,
    the cards are signed with it ``publish_ahead`` seconds later, and the old key stays
    published for :data:`CARD_KEY_KEPT` seconds after its last card. A broken file
    written meanwhile keeps the key that signs."""
    old_key: Any = KEYS["rsa"]()
    new_key: Any = KEYS["ec"]()
    old_kid, new_kid = SigningKey.of(old_key).kid, SigningKey.of(new_key).kid
    trust_old = CardTrust.from_file(_write_public(tmp_path / "old.pub", old_key))
    trust_new = CardTrust.from_file(_write_public(tmp_path / "new.pub", new_key))
    async with signed_bridge(tmp_path, old_key) as server, httpx.AsyncClient() as http:
        ring = server.card_keys
        assert ring is not None
        clock = Clock()
        ring.clock = clock

        async def published() -> set[str]:
            """The card keys in the JWKS (the push keys are there too)."""
            push = {k.kid for k in server.push_keys.published()} if server.push_keys else set()
            return {k["kid"] for k in (await http.get(server.jwks_url)).json()["keys"]} - push

        assert await _kids_signing(http, server) == {old_kid}
        before = (await http.get(server.card_url)).json()  # signed by the old key
        # An atomic swap, as a secret manager does it.
        Path(_write_private(tmp_path / "card.pem.new", new_key)).replace(tmp_path / "card.pem")
        assert await published() == {old_kid}  # not looked at yet (once a second)

        clock.now += ring.check_every
        assert await published() == {old_kid, new_kid}  # published at once
        assert await _kids_signing(http, server) == {old_kid}  # the old key still signs
        assert await _accepts(server, trust_old) and not await _accepts(server, trust_new)

        clock.now += ring.publish_ahead
        assert await _kids_signing(http, server) == {new_kid}
        assert await _accepts(server, trust_new) and not await _accepts(server, trust_old)
        assert await _accepts(server, CardTrust(jwks_url=server.jwks_url))
        assert await published() == {old_kid, new_kid}
        # A card fetched before the rotation still verifies with the JWKS of now.
        (await _sdk_verifier(http, server.jwks_url))(parse_agent_card(before))

        # A broken file (a write caught midway) keeps the key that signs.
        secret = "c2VjcmV0IGtleSBieXRlcw"
        broken = tmp_path / "card.pem.broken"
        broken.write_text(f"-----BEGIN PRIVATE KEY-----\n{secret}\n")
        broken.replace(tmp_path / "card.pem")
        ring_log = "trpc_bridge.server.signing.key_ring"
        with caplog.at_level(logging.WARNING, logger=ring_log):
            clock.now += ring.check_every + ring.publish_ahead
            assert await _kids_signing(http, server) == {new_kid}
        (warning,) = [r.getMessage() for r in caplog.records if r.name == ring_log]
        assert "card key file" in warning and str(tmp_path / "card.pem") in warning
        assert secret not in warning and "BEGIN" not in warning
        assert await _accepts(server, trust_new)

        clock.now += CARD_KEY_KEPT
        assert await published() == {new_kid}  # the retired key has left the JWKS
