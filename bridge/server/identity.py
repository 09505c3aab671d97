"""Who is calling: the one rule every door applies (``docs/wire-spec.md`` §3.3).

trpc-agent-go takes the caller's identity from the ``X-User-ID`` header only (gRPC: the
``x-user-id`` metadata); ``message.metadata.user_id`` is informational and never trusted.
The value is trimmed; without one the caller is :data:`ANONYMOUS` — one shared identity,
unlike trpc's per-client anonymous cookie (a deviation: the bridge mints no cookies). A
value longer than the task store's owner column is refused rather than producing a task
that cannot be saved.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2a.server.context import ServerCallContext

from trpc_bridge.names import USER_ID_HEADER
from trpc_bridge.server.tasks.store import ANONYMOUS, ID_LENGTH

_HEADER = USER_ID_HEADER.lower()


class IdentityError(ValueError):
    """The identity header cannot be used; the message says why (safe to show)."""


def caller_id(headers: Mapping[str, str]) -> str:
    """The caller's user id from lower-case ``headers``, or :data:`ANONYMOUS`. Raises
    :class:`IdentityError` when it is longer than the task store can keep."""
    user_id = headers.get(_HEADER, "").strip()
    if len(user_id) > ID_LENGTH:
        raise IdentityError(f"{USER_ID_HEADER} is longer than {ID_LENGTH} characters")
    return user_id or ANONYMOUS


def lower_headers(pairs: Any) -> dict[str, str]:
    """``(name, value)`` pairs (HTTP headers, gRPC metadata) as a dict with lower-case
    names; binary gRPC values (``-bin`` keys) are skipped."""
    return {str(name).lower(): value for name, value in pairs or () if isinstance(value, str)}


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
