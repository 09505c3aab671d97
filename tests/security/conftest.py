"""Servers with authentication for the security tests, on free loopback ports."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from security_peers import OidcPeer, Pki

from trpc_bridge.agents.scenarios import whoami
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.auth.options import SecurityOptions

AUDIENCE = "https://bridge.test/agent"


@pytest.fixture(scope="module")
def idp() -> Iterator[OidcPeer]:
    with OidcPeer.start(audience=AUDIENCE) as peer:
        yield peer


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki.make(tmp_path_factory.mktemp("pki"))


def oidc_options(idp: OidcPeer, **security: object) -> ServerOptions:
    return ServerOptions(
        security=SecurityOptions(
            auth="oidc",
            oidc_issuer=idp.issuer,
            audience=idp.audience,
            **security,  # type: ignore[arg-type]
        )
    )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def oidc_server(idp: OidcPeer) -> AsyncIterator[BridgeServer]:
    async with BridgeServer(whoami, oidc_options(idp)) as server:
        yield server


def key_file(path: Path, entries: dict[str, str]) -> Path:
    """An API key file naming ``entries`` (key → user)."""
    from trpc_bridge.server.auth.api_keys import key_digest

    path.write_text("".join(f"{user} {key_digest(key)}\n" for key, user in entries.items()))
    return path
