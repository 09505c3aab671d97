"""What :class:`~trpc_bridge.client.remote_agent.RemoteAgent` needs from a transport, and
how remote agents report a transport failure.

Results come back as JSON (either A2A wire shape): the decoder reads both, so the JSON-RPC
reader hands over what it parsed and the a2a-sdk transports dump their protobufs.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any, Protocol

import grpc
import httpx
from a2a.types import Message

from trpc_bridge.events import AgentEvent, AgentRequest, ErrorType


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


class Transport(Protocol):
    def stream(self, message: Message, headers: Mapping[str, str]) -> AsyncGenerator[Any, None]:
        """The results of a streaming send, in order, until the server ends the stream."""
        ...

    async def send(
        self, message: Message, headers: Mapping[str, str], *, return_immediately: bool = False
    ) -> Any:
        """The result of a unary send; ``return_immediately`` asks the server to answer
        with the task as soon as it exists (A2A 1.0; ``blocking: false`` in 0.3)."""
        ...

    def subscribe(self, task_id: str, headers: Mapping[str, str]) -> AsyncGenerator[Any, None]:
        """The results of a (re)subscription to a running task, until the server ends it."""
        ...

    async def get_task(self, task_id: str, headers: Mapping[str, str]) -> Any: ...

    async def cancel_task(self, task_id: str, headers: Mapping[str, str]) -> None: ...

    async def aclose(self) -> None: ...
