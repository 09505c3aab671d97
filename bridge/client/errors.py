"""How calling a remote agent fails: the two errors of the client, the words for a failed
call, and the event through which a transport failure reaches the consumer."""

from __future__ import annotations

import grpc
import httpx

from trpc_bridge.events import AgentEvent, AgentRequest, ErrorType


class RemoteAgentError(RuntimeError):
    """The remote agent cannot be used: no card, an unusable card, no matching transport."""


class RemoteCallError(RuntimeError):
    """A call to the remote agent failed (HTTP status, JSON-RPC error, broken stream)."""


def failure_text(exc: BaseException) -> str:
    """What went wrong with a call, in words: the text reaches the caller's events (and,
    through a proxy, its own callers), so it never is Python's ``repr`` of an exception."""
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    if isinstance(exc, httpx.ConnectError):
        return "cannot connect"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "the connection closed before the answer was complete"
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, httpx.HTTPError):
        return f"HTTP transport error ({type(exc).__name__})"
    if isinstance(exc, grpc.aio.AioRpcError):
        return f"gRPC {exc.code().name}: {exc.details() or ''}".rstrip(": ")
    if isinstance(exc, grpc.RpcError):
        return "gRPC call failed"
    return str(exc) or type(exc).__name__


def run_error_event(message: str, request: AgentRequest, author: str) -> AgentEvent:
    """How a remote agent's transport failure reaches the consumer: a terminal
    ``run_error`` event (trpc's client does the same), never an exception."""
    event = AgentEvent.failure(message, type=ErrorType.RUN)
    event.invocation_id, event.author = request.invocation_id, author
    return event
