"""Who is calling: the ``X-User-ID`` header (HTTP) or ``x-user-id`` metadata (gRPC).

trpc-agent-go takes the caller's identity from that header only (reference §3.3, §6);
``message.metadata.user_id`` is informational and never trusted. Without the header the
caller is :data:`ANONYMOUS` — one shared identity, unlike trpc's per-client anonymous
cookie (a deviation: the bridge does not mint cookies).
"""

from __future__ import annotations

from typing import Any

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.utils.errors import InvalidParamsError

from trpc_bridge.server.task_store import ID_LENGTH

USER_ID_HEADER = "x-user-id"
ANONYMOUS = "anonymous"


class Caller(User):
    """The identity a task belongs to; also the owner key of the task store."""

    def __init__(self, user_id: str) -> None:
        self._user_id = user_id

    @property
    def is_authenticated(self) -> bool:
        return self._user_id != ANONYMOUS

    @property
    def user_name(self) -> str:
        return self._user_id


def _grpc_user_id(grpc_context: Any) -> str:
    for key, value in grpc_context.invocation_metadata() or ():
        if key.lower() == USER_ID_HEADER:
            return value.decode() if isinstance(value, bytes) else str(value)
    return ""


def caller_id(context: ServerCallContext) -> str:
    """The trimmed user id of the request, or :data:`ANONYMOUS`. Longer than the task
    store's owner column (255): refused, rather than a task that cannot be saved."""
    headers = context.state.get("headers")
    user_id = ""
    if isinstance(headers, dict):
        # Starlette lower-cases header names; match case-insensitively anyway.
        user_id = next((v for k, v in headers.items() if k.lower() == USER_ID_HEADER), "")
    elif "grpc_context" in context.state:
        user_id = _grpc_user_id(context.state["grpc_context"])
    user_id = user_id.strip()
    if len(user_id) > ID_LENGTH:
        raise InvalidParamsError(message=f"X-User-ID is longer than {ID_LENGTH} characters")
    return user_id or ANONYMOUS


def owner_context(user_id: str) -> ServerCallContext:
    """A call context whose user is ``user_id``: the task store scopes rows by it."""
    return ServerCallContext(user=Caller(user_id))
