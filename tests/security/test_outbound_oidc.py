"""Credentials on the way out against a real OpenID provider (npm ``oidc-provider``) and
a bridge with ``--auth oidc`` (the ``whoami`` agent answers with the caller it was given):
``trpc-bridge call --token``, OAuth 2.0 client credentials found through the card's
OpenID Connect scheme on every transport, and a proxy that forwards each caller's token
or uses its own client credentials."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from a2a.client.card_resolver import parse_agent_card
from a2a.utils.signing import SignatureVerificationError, create_signature_verifier
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt import PyJWK
from security_peers import OidcPeer
from typer.testing import CliRunner

from security.conftest import oidc_options
from trpc_bridge.agent import FunctionAgent
from trpc_bridge.agents.scenarios import whoami
from trpc_bridge.cli import app
from trpc_bridge.client import RemoteAgent
from trpc_bridge.client.card_trust import ALGORITHMS, CardTrust
from trpc_bridge.client.credentials import CredentialOptions, ForwardedToken
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _answer(events: list[AgentEvent]) -> str:
    return " ".join(
        c.message.content or c.delta.content for e in events for c in e.choices
    ) + " ".join(e.error.message for e in events if e.error is not None)


async def test_call_with_a_token_is_the_tokens_subject(
    oidc_server: BridgeServer, idp: OidcPeer, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    token = await asyncio.to_thread(idp.token, "alice")
    ok = await asyncio.to_thread(
        runner.invoke, app, ["call", oidc_server.base_url, "hi", "--token", token]
    )
    assert ok.exit_code == 0 and "user=alice" in ok.output, ok.output
    monkeypatch.setenv("TRPC_BRIDGE_TOKEN", await asyncio.to_thread(idp.token, "bob"))
    env = await asyncio.to_thread(runner.invoke, app, ["call", oidc_server.base_url, "hi"])
    assert env.exit_code == 0 and "user=bob" in env.output, env.output
    monkeypatch.delenv("TRPC_BRIDGE_TOKEN")
    refused = await asyncio.to_thread(runner.invoke, app, ["call", oidc_server.base_url, "hi"])
    assert refused.exit_code == 1
    assert token not in refused.output


@pytest.mark.parametrize("transport", ["jsonrpc", "rest", "grpc"])
async def test_client_credentials_found_through_the_cards_openid_scheme(
    oidc_server: BridgeServer, idp: OidcPeer, transport: str
) -> None:
    options = CredentialOptions(
        client_id="alice", client_secret="alice-secret", audience=idp.audience
    )
    async with await RemoteAgent.connect(
        oidc_server.base_url, transport=transport, credentials=options
    ) as agent:
        for _ in range(2):
            events = [e async for e in agent.run(AgentRequest(text="hi"))]
            assert "user=alice" in _answer(events), _answer(events)


async def test_a_proxy_forwards_the_callers_token_or_uses_its_own(
    oidc_server: BridgeServer, idp: OidcPeer
) -> None:
    upstream = oidc_server.base_url
    forward = await RemoteAgent.connect(upstream, credentials=ForwardedToken())
    own = await RemoteAgent.connect(
        upstream,
        credentials=CredentialOptions(
            client_id="bob", client_secret="bob-secret", audience=idp.audience
        ),
    )
    async with (
        forward,
        own,
        BridgeServer(forward, oidc_options(idp)) as forwarding,
        BridgeServer(own, oidc_options(idp)) as owning,
        httpx.AsyncClient(timeout=30) as http,
    ):
        token = await asyncio.to_thread(idp.token, "alice")
        for proxy, expected in ((forwarding, "user=alice"), (owning, "user=bob")):
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
                },
            }
            headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {token}"}
            answer = await http.post(proxy.jsonrpc_url, json=body, headers=headers)
            assert expected in answer.text, answer.text
            refused = await http.post(proxy.jsonrpc_url, json=body, headers={"A2A-Version": "1.0"})
            assert refused.status_code == 401


@pytest.mark.parametrize("transport", ["jsonrpc", "rest", "grpc"])
async def test_only_an_agent_that_asks_is_given_the_verified_token(
    idp: OidcPeer, transport: str
) -> None:
    """The token RemoteAgent sends (JSON-RPC, REST, gRPC metadata) is verified by the
    bridge and handed to an agent that forwards it; an agent that does not ask sees none."""
    seen: list[str | None] = []

    async def record(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        token = request.caller_token
        seen.append(token.get_secret_value() if token is not None else None)
        yield AgentEvent.final_text("ok", "r1")

    class Forwarding(FunctionAgent):
        forwards_caller_token = True

    token = await asyncio.to_thread(idp.token, "alice")
    for agent, expected in (
        (Forwarding("fwd", "forwards", record), token),
        (FunctionAgent("plain", "keeps to itself", record), None),
    ):
        async with (
            BridgeServer(agent, oidc_options(idp)) as server,
            await RemoteAgent.connect(
                server.base_url, transport=transport, credentials=CredentialOptions(token=token)
            ) as remote,
        ):
            events = [e async for e in remote.run(AgentRequest(text="hi"))]
            assert events[-1].error is None, events[-1]
        assert seen[-1] == expected


async def test_a_signed_card_covers_its_security_schemes(idp: OidcPeer, tmp_path: Path) -> None:
    """``--auth oidc`` with ``--card-signing-key``: every form of the card carries the
    OpenID scheme (1.0 fields, and the 0.3 ones for 0.3 callers) under a signature that
    a2a-sdk's verifier and ``RemoteAgent`` accept, and that breaks if the scheme changes."""
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    (tmp_path / "card.pem").write_bytes(pem)
    options = replace(oidc_options(idp), card_signing_key=str(tmp_path / "card.pem"))
    async with BridgeServer(whoami, options) as server, httpx.AsyncClient() as http:
        keys = {k["kid"]: PyJWK(k) for k in (await http.get(server.jwks_url)).json()["keys"]}
        verifier = create_signature_verifier(lambda kid, jku: keys[kid or ""], ALGORITHMS)
        for headers in ({}, {"A2A-Version": "1.0"}, {"A2A-Version": "0.3"}):
            raw = (await http.get(server.card_url, headers=headers)).json()
            card = parse_agent_card(copy.deepcopy(raw))
            assert card.security_schemes and card.security_requirements
            verifier(card)
            # Where a client would fetch its tokens from, changed (the 1.0 field, and the
            # 0.3 one that the card for 0.3 callers carries beside it).
            (scheme,) = [v for v in raw["securitySchemes"].values() if "openIdConnect" in str(v)]
            for place in (scheme.get("openIdConnectSecurityScheme"), scheme):
                if place is not None and "openIdConnectUrl" in place:
                    place["openIdConnectUrl"] = "https://evil.example/"
            with pytest.raises(SignatureVerificationError):
                verifier(parse_agent_card(raw))
        trust = CardTrust(jwks_url=server.jwks_url)
        token = await asyncio.to_thread(idp.token, "alice")
        async with await RemoteAgent.connect(
            server.base_url, card_trust=trust, credentials=CredentialOptions(token=token)
        ) as agent:
            events = [e async for e in agent.run(AgentRequest(text="hi"))]
            assert "user=alice" in _answer(events)
