"""What :class:`~trpc_bridge.client.remote_agent.RemoteAgent` needs from a transport.

Results come back as JSON (either A2A wire shape): the decoder reads both, so the JSON-RPC
reader hands over what it parsed and the a2a-sdk transports dump their protobufs.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any, Protocol

from a2a.types import Message


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
