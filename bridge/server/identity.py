"""Who is calling: the ``X-User-ID`` header (HTTP) or ``x-user-id`` metadata (gRPC).

trpc-agent-go takes the caller's identity from that header only (reference §3.3, §6);
``message.metadata.user_id`` is informational and never trusted. Without the header the
caller is :data:`ANONYMOUS` — one shared identity, unlike trpc's per-client anonymous
cookie (a deviation: the bridge does not mint cookies).
"""

from __future__ import annotations

from typing import Any

from a2a.server.context import ServerCallContext
from a2a.utils.errors import InvalidParamsError

from trpc_bridge.server.task_store import ANONYMOUS, ID_LENGTH

USER_ID_HEADER = "x-user-id"


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
