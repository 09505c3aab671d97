"""Credentials on the way out (``client/credentials.py``, ``client/auth_headers.py``):
``trpc-bridge call`` and ``RemoteAgent`` send a token from a flag, the environment or a
file (re-read when it changes), or OAuth 2.0 client-credentials tokens from the token
endpoint the card's ``securitySchemes`` name (cached, refreshed before expiry, fetched
once for concurrent calls); the card's scheme decides the header (a2a-sdk's auth
interceptor); nothing goes to a host the caller did not name; a proxy forwards its
caller's bearer token upstream, or nothing.

The peers: trpc-agent-go's recorded wire (``ReplayPeer``, which records each request's
headers), the bridge itself behind the proxy, and an RFC 6749 token endpoint on loopback.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest
from replay_server import ReplayPeer, go_sse_frame, serving
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from vector_files import VECTORS

from trpc_bridge.cli.call import run_call
from trpc_bridge.client import RemoteAgent, RemoteAgentError
from trpc_bridge.client.credentials import (
    ClientCredentials,
    CredentialOptions,
    ForwardedToken,
)
from trpc_bridge.events import AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.http.listener import serving as serving_app

SECRET = "client-secret-never-shown"


def _frames() -> list[bytes]:
    frames = json.loads((VECTORS / "C12.json").read_text())["input"]
    return [go_sse_frame(f) for f in frames]


def peer_with(**card: Any) -> ReplayPeer:
    peer = ReplayPeer(stream_chunks=_frames())
    peer.card.update(card)
    return peer


def sent(peer: ReplayPeer, header: str) -> list[str]:
    return [c.headers.get(header.lower(), "") for c in peer.calls]


@dataclass
class TokenEndpoint:
    """An OAuth 2.0 token endpoint (RFC 6749 §4.4, client_secret_basic)."""

    lifetime: int = 3600
    url: str = ""
    issued: list[str] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)

    async def token(self, request: Request) -> Response:
        form = dict(parse_qsl((await request.body()).decode()))
        scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
        client_id, _, secret = base64.b64decode(encoded).decode().partition(":")
        if scheme != "Basic" or (client_id, secret) != ("bridge", SECRET):
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if form.get("grant_type") != "client_credentials":
            return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
        self.scopes.append(str(form.get("scope", "")))
        token = f"cc-token-{len(self.issued) + 1}"
        self.issued.append(token)
        body = {"access_token": token, "token_type": "Bearer", "expires_in": self.lifetime}
        return JSONResponse(body)

    async def discovery(self, request: Request) -> Response:
        return JSONResponse({"issuer": self.url, "token_endpoint": f"{self.url}/token"})


@contextlib.asynccontextmanager
async def token_endpoint(**kwargs: Any) -> AsyncIterator[TokenEndpoint]:
    endpoint = TokenEndpoint(**kwargs)
    app = Starlette(
        routes=[
            Route("/token", endpoint.token, methods=["POST"]),
            Route("/.well-known/openid-configuration", endpoint.discovery, methods=["GET"]),
        ]
    )
    async with serving_app(app) as url:
        endpoint.url = url
        yield endpoint


async def test_call_sends_the_token_from_a_flag_the_environment_or_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    peer = peer_with()
    async with serving(peer) as base:
        assert await run_call(base, "hi", credentials=CredentialOptions(token="t-flag")) == 0
        assert sent(peer, "Authorization") == ["Bearer t-flag"]

        # The CLI reads TRPC_BRIDGE_TOKEN (typer's envvar) into the same option.
        from typer.testing import CliRunner

        from trpc_bridge.cli import app

        monkeypatch.setenv("TRPC_BRIDGE_TOKEN", "t-env")
        result = await asyncio.to_thread(CliRunner().invoke, app, ["call", base, "hi", "--json"])
        assert result.exit_code == 0, result.output
        assert sent(peer, "Authorization")[-1] == "Bearer t-env"

        token_file = tmp_path / "token"
        token_file.write_text("t-file-1\n")
        options = CredentialOptions(token_file=str(token_file))
        async with await RemoteAgent.connect(base, credentials=options) as agent:
            [e async for e in agent.run(AgentRequest(text="a"))]
            token_file.write_text("t-file-2-rotated\n")  # replaced while the client runs
            [e async for e in agent.run(AgentRequest(text="b"))]
        assert sent(peer, "Authorization")[-2:] == ["Bearer t-file-1", "Bearer t-file-2-rotated"]
        capsys.readouterr()

        both = CredentialOptions(token="x", token_file=str(token_file))
        assert await run_call(base, "hi", credentials=both) == 1
        assert "give one credential" in capsys.readouterr().err


async def test_the_card_scheme_decides_the_header() -> None:
    """An API-key scheme in a header gets the key in that header (a2a-sdk's interceptor
    places it); an OpenID Connect scheme gets a bearer token."""
    api_key = peer_with(
        securitySchemes={"key": {"type": "apiKey", "in": "header", "name": "X-Agent-Key"}},
        security=[{"key": []}],
    )
    async with (
        serving(api_key) as base,
        await RemoteAgent.connect(base, credentials=CredentialOptions(token="k-123")) as agent,
    ):
        [e async for e in agent.run(AgentRequest(text="a"))]
    assert sent(api_key, "X-Agent-Key") == ["k-123"]
    assert sent(api_key, "Authorization") == [""]


async def test_client_credentials_found_through_the_card_are_cached_and_refreshed() -> None:
    async with token_endpoint() as issuer:
        oauth2 = {
            "cc": {
                "type": "oauth2",
                "flows": {
                    "clientCredentials": {
                        "tokenUrl": f"{issuer.url}/token",
                        "scopes": {"agent:call": "call the agent"},
                    }
                },
            }
        }
        peer = peer_with(securitySchemes=oauth2, security=[{"cc": ["agent:call"]}])
        options = CredentialOptions(
            client_id="bridge", client_secret=SECRET, scopes=("agent:call",)
        )
        async with serving(peer) as base:
            async with await RemoteAgent.connect(base, credentials=options) as agent:
                for text in ("a", "b", "c"):
                    [e async for e in agent.run(AgentRequest(text=text))]
            assert sent(peer, "Authorization") == ["Bearer cc-token-1"] * 3
            assert issuer.issued == ["cc-token-1"] and issuer.scopes == ["agent:call"]

            # OpenID Connect: the token endpoint from the discovery document.
            oidc = {
                "o": {
                    "type": "openIdConnect",
                    "openIdConnectUrl": f"{issuer.url}/.well-known/openid-configuration",
                }
            }
            peer.card.update(securitySchemes=oidc, security=[{"o": []}])
            assert await run_call(base, "hi", credentials=options) == 0
            assert sent(peer, "Authorization")[-1] == "Bearer cc-token-2"


async def test_tokens_are_refreshed_before_expiry_and_fetched_once_for_concurrent_calls() -> None:
    now = [0.0]
    async with token_endpoint(lifetime=600) as issuer, httpx.AsyncClient() as http:
        source = ClientCredentials(
            f"{issuer.url}/token", "bridge", SECRET, http=http, clock=lambda: now[0]
        )
        tokens = await asyncio.gather(*(source.token() for _ in range(20)))
        assert set(tokens) == {"cc-token-1"} and source.fetches == 1
        now[0] = 539  # 600 s tokens are refreshed 60 s (a tenth) before they expire
        assert await source.token() == "cc-token-1"
        now[0] = 540
        assert await source.token() == "cc-token-2"

        wrong = ClientCredentials(f"{issuer.url}/token", "bridge", "wrong-secret", http=http)
        with pytest.raises(Exception, match="invalid_client") as caught:
            await wrong.token()
        assert "wrong-secret" not in str(caught.value)


async def test_a_refused_client_ends_the_run_with_a_clear_error_and_no_secret(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async with token_endpoint() as issuer:
        peer = peer_with()
        options = CredentialOptions(
            client_id="bridge", client_secret="not-the-secret", token_url=f"{issuer.url}/token"
        )
        async with serving(peer) as base:
            assert await run_call(base, "hi", credentials=options) == 1
        err = capsys.readouterr().err
        assert "invalid_client" in err and "not-the-secret" not in err
        assert peer.calls == []  # nothing was sent without its credential


async def test_credentials_go_only_to_the_host_the_caller_named() -> None:
    # A card whose interface is on another host: no token goes there.
    peer = peer_with(url="http://agent.elsewhere.example:9/")
    async with serving(peer) as base:
        with pytest.raises(RemoteAgentError, match="no credential is sent there"):
            await RemoteAgent.connect(base, credentials=CredentialOptions(token="t"))
        # A card naming a plain-http token endpoint off loopback: no secret goes there.
        peer.card.update(
            url=base,
            securitySchemes={
                "cc": {
                    "type": "oauth2",
                    "flows": {"clientCredentials": {"tokenUrl": "http://idp.example/token"}},
                }
            },
            security=[{"cc": []}],
        )
        options = CredentialOptions(client_id="bridge", client_secret=SECRET)
        with pytest.raises(RemoteAgentError, match="not https"):
            await RemoteAgent.connect(base, credentials=options)


async def test_a_forwarding_proxy_forwards_only_a_verified_token() -> None:
    """``proxy --upstream-auth forward`` on loopback, where the caller is identified by the
    trusted ``X-User-ID`` header: a bearer token the server did not verify is not passed
    upstream (only the identity is); ``tests/security/test_outbound_oidc.py`` forwards a
    verified one."""
    peer = peer_with()
    async with serving(peer) as base:
        remote = await RemoteAgent.connect(base, credentials=ForwardedToken())
        assert remote.forwards_caller_token
        async with (
            remote,
            BridgeServer(remote, ServerOptions(grpc_port=None)) as proxy,
            httpx.AsyncClient(timeout=30) as http,
        ):
            headers = {
                "X-User-ID": "alice",
                "A2A-Version": "1.0",
                "Authorization": "Bearer unverified-token",
            }
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
                },
            }
            answer = await http.post(proxy.jsonrpc_url, json=body, headers=headers)
            assert "result" in answer.json(), answer.text
    assert sent(peer, "Authorization") == [""]
    assert sent(peer, "X-User-ID") == ["alice"]


async def test_a_transport_on_the_extended_card_keeps_the_callers_headers() -> None:
    """REST is on the extended card only, which is asked for with the credential: that
    credential goes with the card request (and later per call, placed by the card's
    scheme), while the caller's own extra headers stay the agent's static headers."""
    peer = peer_with()
    async with serving(peer) as base:
        jsonrpc = {"url": base, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        rest = {
            "url": f"{base.rstrip('/')}/rest",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "1.0",
        }
        for key in ("url", "version"):
            peer.card.pop(key)
        peer.card["capabilities"]["extendedAgentCard"] = True
        peer.card["supportedInterfaces"] = [jsonrpc]
        peer.extended_card = {**peer.card, "supportedInterfaces": [jsonrpc, rest]}
        async with await RemoteAgent.connect(
            base,
            transport="rest",
            credentials=CredentialOptions(token="t-extended"),
            headers={"X-Caller": "kept"},
        ) as agent:
            assert agent.endpoint.binding == "HTTP+JSON"
            assert agent._headers == {"X-Caller": "kept"}
    assert peer.methods() == ["GetExtendedAgentCard"]
    assert sent(peer, "Authorization") == ["Bearer t-extended"]
