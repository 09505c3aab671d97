"""The authenticator protocol every scheme implements, and the gate that runs one."""

from __future__ import annotations

from typing import Protocol

from trpc_bridge.names import ID_LENGTH
from trpc_bridge.server.auth.errors import Forbidden, Unauthenticated
from trpc_bridge.server.auth.presented import AUTHORIZATION, Presented, screen
from trpc_bridge.server.auth.principal import Principal, Scheme

#: ``realm`` of every challenge the bridge writes.
REALM = "trpc-bridge"


class Authenticator(Protocol):
    """One scheme: turns what a request presents into a :class:`Principal` or refuses it
    (:class:`~trpc_bridge.server.auth.errors.AuthError`)."""

    scheme: Scheme

    async def authenticate(self, presented: Presented) -> Principal: ...

    def challenge(self, refusal: Unauthenticated) -> str:
        """The ``WWW-Authenticate`` value that answers ``refusal``."""
        ...

    async def start(self) -> None:
        """Get ready to serve (fetch keys, …); a failure here must not stop the server."""
        ...

    async def close(self) -> None: ...


def bearer_token(presented: Presented) -> str:
    """The token of the request's ``Authorization: Bearer …`` header (RFC 6750 §2.1).
    Raises :class:`Unauthenticated` when there is none or it is not a bearer token."""
    header = presented.one(AUTHORIZATION)
    if header is None:
        raise Unauthenticated("a bearer token is required (Authorization: Bearer …)", error="")
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        raise Unauthenticated("the Authorization header is not a bearer token")
    token = token.strip()
    if not token:
        raise Unauthenticated("the bearer token is empty")
    return token


def bearer_challenge(refusal: Unauthenticated, **params: str) -> str:
    """``Bearer realm="…"[, error=…]`` (RFC 6750 §3); the description is the refusal's
    message, which holds nothing of the token."""
    fields = {"realm": REALM, **params}
    if refusal.error:
        fields["error"] = refusal.error
        fields["error_description"] = refusal.message.replace('"', "'")
    return "Bearer " + ", ".join(f'{key}="{value}"' for key, value in fields.items())


def checked_user_id(user_id: str, what: str) -> str:
    """A verified identity the task store can own tasks under; else :class:`Forbidden`
    (the caller is authenticated, but the bridge cannot serve it)."""
    user_id = user_id.strip()
    if not user_id:
        raise Forbidden(f"the {what} names no user")
    if len(user_id) > ID_LENGTH:
        raise Forbidden(f"the {what} names a user longer than {ID_LENGTH} characters")
    return user_id


class AuthGate:
    """The one authenticator of a server: the edges (HTTP, gRPC) send every request
    through :meth:`admit`."""

    def __init__(self, authenticator: Authenticator) -> None:
        self.authenticator = authenticator
        self.scheme = authenticator.scheme

    async def admit(self, presented: Presented) -> Principal:
        """The caller; raises :class:`~trpc_bridge.server.auth.errors.AuthError`."""
        screen(presented)
        return await self.authenticator.authenticate(presented)

    def challenge(self, refusal: Unauthenticated) -> str:
        return self.authenticator.challenge(refusal)

    async def start(self) -> None:
        await self.authenticator.start()

    async def close(self) -> None:
        await self.authenticator.close()
