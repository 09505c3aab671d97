"""How a :class:`~trpc_bridge.client.RemoteAgent` reaches its agent: the card (fetched,
its signature checked, the extended card when the wanted transport is only there), the
credential and where it may go, and the transport the card offers (JSON-RPC over httpx,
REST or gRPC through a2a-sdk)."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from trpc_bridge.client.auth_headers import OutboundAuth, check_destination
from trpc_bridge.client.card import (
    TRANSPORTS,
    Endpoint,
    ResolvedCard,
    extended_card_endpoint,
    fetch_card,
    fetch_extended_card,
)
from trpc_bridge.client.card_trust import CardTrust
from trpc_bridge.client.credentials import (
    CredentialOptions,
    ForwardedToken,
    TokenSource,
    token_source,
)
from trpc_bridge.client.jsonrpc import JsonRpcTransport
from trpc_bridge.client.sdk_transport import SdkTransport
from trpc_bridge.client.tls import ClientTls
from trpc_bridge.client.transport import Transport
from trpc_bridge.events import AgentRequest
from trpc_bridge.names import TRANSPORT_JSONRPC


@dataclass(frozen=True)
class Reached:
    """An agent reached: its card, the endpoint chosen, the transport to it, the HTTP
    client (the caller closes it), the credential (None: none) and the TLS settings."""

    card: ResolvedCard
    endpoint: Endpoint
    wire: Transport
    http: httpx.AsyncClient
    auth: OutboundAuth | None
    tls: ClientTls


async def reach(
    url: str,
    *,
    transport: str | None,
    version: str | None,
    connect_timeout: float,
    idle_timeout: float | None,
    card_trust: CardTrust | None,
    credentials: CredentialOptions | TokenSource | ForwardedToken | None,
    tls: ClientTls | None,
) -> Reached:
    """The agent at ``url`` (the arguments are :meth:`RemoteAgent.connect`'s). Raises
    :class:`~trpc_bridge.client.errors.RemoteAgentError` when it cannot be used."""
    timeout = httpx.Timeout(idle_timeout, connect=connect_timeout)
    tls = tls or ClientTls()
    tls.check()
    http = httpx.AsyncClient(timeout=timeout, verify=tls.httpx_verify())
    try:
        card = await fetch_card(http, url)
        if card_trust is not None:
            await card_trust.verify(http, card, url)
        wanted = TRANSPORTS.get(transport.lower()) if transport else None
        source = await _token_source(credentials, card, http)
        if wanted and all(e.binding != wanted for e in card.endpoints):
            asked = extended_card_endpoint(card)
            # The extended card is asked for with the credential, where it may go.
            credential = (
                await _outbound_auth(source, card, asked, url).headers(AgentRequest())
                if source is not None and asked is not None
                else {}
            )
            public, card = card, await fetch_extended_card(http, card, credential)
            if card_trust is not None and card is not public:
                await card_trust.verify(http, card, f"{url} (extended card)")
        endpoint = card.choose(transport, version)
        auth = _outbound_auth(source, card, endpoint, url) if source is not None else None
        wire: Transport
        if endpoint.binding == TRANSPORT_JSONRPC:
            wire = JsonRpcTransport(http, endpoint)
        else:
            secure = url.lower().startswith("https:")
            wire = SdkTransport(card.sdk_card(endpoint), timeout, tls, secure=secure)
    except BaseException:
        await http.aclose()
        raise
    return Reached(card, endpoint, wire, http, auth, tls)


async def _token_source(
    credentials: CredentialOptions | TokenSource | ForwardedToken | None,
    card: ResolvedCard,
    http: httpx.AsyncClient,
) -> TokenSource | ForwardedToken | None:
    """Where the credential comes from (one source for the whole connection: one cache of
    client-credentials tokens)."""
    if isinstance(credentials, CredentialOptions):
        return None if credentials.empty else await token_source(credentials, card, http)
    return credentials


def _outbound_auth(
    source: TokenSource | ForwardedToken, card: ResolvedCard, endpoint: Endpoint, url: str
) -> OutboundAuth:
    """The credential for ``endpoint``, placed as ``card`` says; raises
    :class:`RemoteAgentError` when the endpoint is not where it may go."""
    check_destination(endpoint, url)
    return OutboundAuth(source, card.sdk_card(endpoint))
