"""Where a credential goes on each request: the header the agent's card asks for.

a2a-sdk's client auth interceptor (``a2a.client.auth.AuthInterceptor``) places a
credential by the card's security requirements: ``Authorization: Bearer`` for HTTP
bearer, OAuth 2.0 and OpenID Connect schemes, the named header for an API key in a
header. The bridge's client runs it for every transport (its own JSON-RPC reader as
well as a2a-sdk's REST and gRPC clients, where the headers become gRPC metadata), so
the rule is a2a-sdk's everywhere. A card that declares no scheme (trpc-agent-go's, or an
agent behind an authenticating proxy) gets ``Authorization: Bearer``: the caller gave a
token for it on purpose.

Credentials go only where the caller pointed: every endpoint must be on the host of the
URL the caller gave (and, for HTTP, its scheme and port too): a card that lists an
interface elsewhere — a typo, a stale hostname, a card someone altered — gets no token.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from a2a.client.auth import AuthInterceptor, CredentialService
from a2a.client.client import ClientCallContext
from a2a.client.interceptors import BeforeArgs
from a2a.types import AgentCard

from trpc_bridge.client.card import Endpoint
from trpc_bridge.client.credentials import ForwardedToken, TokenSource
from trpc_bridge.client.errors import RemoteAgentError
from trpc_bridge.events import AgentRequest

AUTHORIZATION = "Authorization"


class _OneToken(CredentialService):
    """Every scheme the card names gets the one token the caller has."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def get_credentials(self, security_scheme_name: str, context: object) -> str | None:
        return self._token or None


async def credential_headers(token: str, card: AgentCard) -> dict[str, str]:
    """The headers that carry ``token`` to the agent of ``card`` (none for ``""``)."""
    if not token:
        return {}
    if not card.security_requirements or not card.security_schemes:
        return {AUTHORIZATION: f"Bearer {token}"}
    args = BeforeArgs(input=None, method="", agent_card=card, context=ClientCallContext())
    await AuthInterceptor(_OneToken(token)).before(args)
    assert args.context is not None
    return dict(args.context.service_parameters or {})


def _origin(url: str, binding: str) -> tuple[str, ...]:
    if binding == "GRPC":  # host:port, its own port: the host is what must match
        return ((urlsplit(f"//{url}").hostname or "").lower(),)
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    return ((parts.hostname or "").lower(), parts.scheme, str(port))


def check_destination(endpoint: Endpoint, given_url: str) -> None:
    """Raises :class:`RemoteAgentError` when ``endpoint`` is not where the caller's
    credential may go (see the module doc)."""
    allowed = _origin(given_url, "JSONRPC")
    target = _origin(endpoint.url, endpoint.binding)
    if target != allowed[: len(target)]:
        raise RemoteAgentError(
            f"the card's {endpoint.binding} endpoint {endpoint.url} is not on {given_url}'s "
            "host (and port): no credential is sent there"
        )


class OutboundAuth:
    """The credential headers for one agent: ``source``'s token (or, forwarding, the
    request's caller's), placed per ``card``."""

    def __init__(self, source: TokenSource | ForwardedToken, card: AgentCard) -> None:
        self.source = source
        self.card = card

    async def headers(self, request: AgentRequest) -> dict[str, str]:
        if isinstance(self.source, ForwardedToken):
            secret = request.caller_token
            token = secret.get_secret_value() if secret is not None else ""
        else:
            token = await self.source.token()
        return await credential_headers(token, self.card)
