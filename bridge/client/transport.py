"""What :class:`~trpc_bridge.client.remote_agent.RemoteAgent` needs from a transport, and
how remote agents report a transport failure.

Results come back as JSON (either A2A wire shape): the decoder reads both, so the JSON-RPC
reader hands over what it parsed and the a2a-sdk transports dump their protobufs.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any, Protocol

from a2a.types import Message

from trpc_bridge.events import AgentEvent, AgentRequest, ErrorType


class RemoteCallError(RuntimeError):
    """A call to the remote agent failed (HTTP status, JSON-RPC error, broken stream)."""


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

    async def send(self, message: Message, headers: Mapping[str, str]) -> Any: ...

    async def get_task(self, task_id: str, headers: Mapping[str, str]) -> Any: ...

    async def cancel_task(self, task_id: str, headers: Mapping[str, str]) -> None: ...

    async def aclose(self) -> None: ...
