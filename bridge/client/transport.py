"""What :class:`~trpc_bridge.client.remote_agent.RemoteAgent` needs from a transport.

Results come back as the neutral frames of :mod:`trpc_bridge.codecs.a2a.frames`, read
once by the transport from whatever it received: JSON in either A2A wire shape on
JSON-RPC (:func:`~trpc_bridge.codecs.a2a.frames.read_result`), a2a-sdk's protobufs on REST
and gRPC (:func:`~trpc_bridge.codecs.a2a.proto_frames.read_proto`). A stream skips a
result it cannot read (with a warning), as trpc's client does; a unary call raises
:class:`~trpc_bridge.codecs.errors.CodecError` for one.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Protocol

from a2a.types import Message

from trpc_bridge.codecs.a2a.frames import Frame


class Transport(Protocol):
    def stream(self, message: Message, headers: Mapping[str, str]) -> AsyncGenerator[Frame, None]:
        """The results of a streaming send, in order, until the server ends the stream."""
        ...

    async def send(
        self, message: Message, headers: Mapping[str, str], *, return_immediately: bool = False
    ) -> Frame:
        """The result of a unary send; ``return_immediately`` asks the server to answer
        with the task as soon as it exists (A2A 1.0; ``blocking: false`` in 0.3)."""
        ...

    def subscribe(self, task_id: str, headers: Mapping[str, str]) -> AsyncGenerator[Frame, None]:
        """The results of a (re)subscription to a running task, until the server ends it."""
        ...

    async def get_task(self, task_id: str, headers: Mapping[str, str]) -> Frame: ...

    async def cancel_task(self, task_id: str, headers: Mapping[str, str]) -> None: ...

    async def aclose(self) -> None: ...
