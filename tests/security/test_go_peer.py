"""trpc-agent-go's A2A client (the Go peer, ``interop/go``) against a bridge with
``--auth oidc``: it gets its token from the real OpenID provider with trpc-a2a-go's own
OAuth2 client-credentials option (``client.WithOAuth2ClientCredentials``, passed through
``a2aagent.WithA2AClientExtraOptions``) and sends it as ``Authorization: Bearer``."""

from __future__ import annotations

import asyncio

import pytest
from peers import SKIP_NO_GO, build_gopeer, go_available, go_call
from security_peers import OidcPeer

from trpc_bridge.server import BridgeServer

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(not go_available(), reason=SKIP_NO_GO),
]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "unary"])
async def test_the_go_client_gets_and_sends_a_token(
    oidc_server: BridgeServer, idp: OidcPeer, stream: bool
) -> None:
    await asyncio.to_thread(build_gopeer)
    oauth = ["--oauth2-client-id", "bob", "--oauth2-client-secret", "bob-secret"]
    oauth += ["--oauth2-token-url", f"{idp.issuer}/token"]
    result = await asyncio.to_thread(
        go_call, oidc_server.base_url, "hi", stream=stream, user="mallory", extra=oauth
    )
    assert result.returncode == 0, result.logs
    assert "user=bob" in str(result.events)  # the token's subject, not --user
    refused = await asyncio.to_thread(go_call, oidc_server.base_url, "hi", stream=stream)
    assert "user=" not in str(refused.events)
