"""Who is calling: the one rule every door applies (``docs/security.md``).

The caller is the :class:`~trpc_bridge.server.auth.principal.Principal` the server's edge
verified before the door saw the request: the HTTP edge leaves it in the request
(``scope["auth"]``, which a2a-sdk copies into ``ServerCallContext.state["auth"]``), the
gRPC edge in :data:`~trpc_bridge.server.auth.grpc_edge.CALL_PRINCIPAL`. A door reads it
with :func:`http_principal`, :func:`grpc_principal` or :func:`a2a_principal` and hands it
to :meth:`AgentRunner.caller_of <trpc_bridge.server.runner.AgentRunner.caller_of>`, never
reading an identity header itself.

A call that no edge let in (a door's routes used on their own, without ``BridgeServer``;
the ACP door on stdio) falls back to ``X-User-ID`` taken on trust — trpc-agent-go's
convention, and the bridge's default on loopback — but only when the runner's gate is
that header rule; with any other scheme such a call is refused (:func:`unscreened`).
The value is trimmed; without one the caller is ``anonymous``, one shared identity.

Credentials never travel further than the edge: :func:`without_credentials` drops them
from the headers a :class:`~trpc_bridge.server.runner.IncomingCall` carries on (encoding
negotiation, the trace context).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2a.server.context import ServerCallContext

from trpc_bridge.names import USER_ID_KEY
from trpc_bridge.server.auth.authenticator import AuthGate
from trpc_bridge.server.auth.errors import Unauthenticated
from trpc_bridge.server.auth.grpc_edge import CALL_PRINCIPAL
from trpc_bridge.server.auth.presented import CREDENTIAL_HEADERS
from trpc_bridge.server.auth.principal import Principal, Scheme
from trpc_bridge.server.auth.trusted_header import header_principal


def lower_headers(pairs: Any) -> dict[str, str]:
    """``(name, value)`` pairs (HTTP headers, gRPC metadata) as a dict with lower-case
    names; binary gRPC values (``-bin`` keys) are skipped."""
    return {str(name).lower(): value for name, value in pairs or () if isinstance(value, str)}


def without_credentials(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` (lower-case names) less every header that carries a credential."""
    return {k: v for k, v in headers.items() if k not in CREDENTIAL_HEADERS}


def context_headers(context: ServerCallContext) -> dict[str, str]:
    """The request headers of an a2a-sdk call (HTTP) or its invocation metadata (gRPC),
    lower-case names."""
    headers = context.state.get("headers")
    if isinstance(headers, dict):  # Starlette has already lower-cased the names
        return lower_headers(headers.items())
    grpc_context = context.state.get("grpc_context")
    if grpc_context is not None:
        return lower_headers(grpc_context.invocation_metadata())
    return {}


def _principal(value: object) -> Principal | None:
    return value if isinstance(value, Principal) else None


def http_principal(scope: Mapping[str, Any]) -> Principal | None:
    """The principal the HTTP edge attached to a request (its ASGI scope)."""
    return _principal(scope.get("auth"))


def grpc_principal() -> Principal | None:
    """The principal the gRPC edge attached to the call being served."""
    return CALL_PRINCIPAL.get()


def a2a_principal(context: ServerCallContext) -> Principal | None:
    """The principal of an a2a-sdk call, on any transport."""
    return _principal(context.state.get("auth"))


def unscreened(gate: AuthGate, headers: Mapping[str, str]) -> Principal:
    """The caller of a call no edge let in (see the module doc); raises
    :class:`~trpc_bridge.server.auth.errors.AuthError`."""
    if gate.scheme is not Scheme.HEADER:
        raise Unauthenticated("the request did not pass the server's authentication", error="")
    return header_principal(headers.get(USER_ID_KEY))
