"""The HTTP edge: every request to the HTTP port goes through the server's gate before any
door (JSON-RPC, REST, AG-UI, the extended card, push configs) sees it.

Let in, the request carries its :class:`~.principal.Principal` as Starlette's
``request.auth`` (``scope["auth"]``) and a matching ``request.user``, which a2a-sdk copies
into every call's ``ServerCallContext`` (``state["auth"]``, ``user``). Refused, it is
answered at once in its door's form (:mod:`.answers`): JSON-RPC paths with a JSON-RPC
error, AG-UI with its ``{"error": …}``, everything else as REST's AIP-193 error, with the
status and, for a 401, ``WWW-Authenticate``. The body of a refused request is never read.

Only the public paths pass without credentials: ``GET`` of the agent card and of the
playground page and its assets (static files; the page's calls go to ``/agui``), the
probes, and ``/metrics`` when it is declared public. The loopback paths (the trace view's
OTLP receiver) pass without credentials when the peer is on this machine; from anywhere
else they need them like every other path.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.authentication import BaseUser
from starlette.types import ASGIApp, Receive, Scope, Send

from trpc_bridge.addresses import is_loopback
from trpc_bridge.server.auth.answers import answer, jsonrpc_body, plain_body, rest_body
from trpc_bridge.server.auth.authenticator import AuthGate
from trpc_bridge.server.auth.errors import AuthError, Unauthenticated
from trpc_bridge.server.auth.presented import from_asgi
from trpc_bridge.server.auth.principal import Principal

_READS = frozenset({"GET", "HEAD"})


def peer_is_loopback(scope: Scope) -> bool:
    """Whether the request's TCP peer is on this machine and the request names no other
    client: one with ``X-Forwarded-For`` came through a proxy for a caller elsewhere
    (``docs/security.md``). The listener keeps ``client`` the TCP peer's own address."""
    client = scope.get("client")
    if client is None or not is_loopback(str(client[0])):
        return False
    return all(name != b"x-forwarded-for" for name, _ in scope["headers"])


class PrincipalUser(BaseUser):
    """The principal as Starlette's ``request.user`` (a2a-sdk reads its name)."""

    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return self.principal.user_id

    @property
    def identity(self) -> str:
        return self.principal.user_id


class HttpAuthentication:
    """ASGI middleware: the gate in front of every door of the HTTP port."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        gate: AuthGate,
        jsonrpc_paths: Iterable[str],
        plain_paths: Iterable[str] = (),
        public_paths: Iterable[str] = (),
        loopback_paths: Iterable[str] = (),
    ) -> None:
        self.app = app
        self.gate = gate
        self.jsonrpc_paths = frozenset(jsonrpc_paths)
        self.plain_paths = frozenset(plain_paths)
        self.public_paths = frozenset(public_paths)
        self.loopback_paths = frozenset(loopback_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (
            scope["method"] in _READS and scope["path"] in self.public_paths
        ):
            await self.app(scope, receive, send)
            return
        if scope["path"] in self.loopback_paths and peer_is_loopback(scope):
            await self.app(scope, receive, send)
            return
        try:
            principal = await self.gate.admit(from_asgi(scope))
        except AuthError as refusal:
            await self._refuse(scope, send, refusal)
            return
        scope["auth"] = principal
        scope["user"] = PrincipalUser(principal)
        await self.app(scope, receive, send)

    async def _refuse(self, scope: Scope, send: Send, refusal: AuthError) -> None:
        path = scope["path"]
        if path in self.jsonrpc_paths:
            body = jsonrpc_body(refusal)
        elif path in self.plain_paths:
            body = plain_body(refusal)
        else:
            body = rest_body(refusal)
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", b"no-store"),
        ]
        if isinstance(refusal, Unauthenticated):
            challenge = self.gate.challenge(refusal)
            if challenge:
                headers.append((b"www-authenticate", challenge.encode("latin-1", "replace")))
        status = answer(refusal).http_status
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
