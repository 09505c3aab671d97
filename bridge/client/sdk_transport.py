"""REST and gRPC through a2a-sdk's transports (1.0, and the 0.3 compat ones).

These bindings are only offered by a2a-sdk-based servers, whose streams never hold more
than one ``message`` frame, so the SDK client's stop-at-first-message does not bite here.
Its protobuf results are read straight into the neutral frames
(:func:`~trpc_bridge.codecs.a2a.proto_frames.read_proto`). The SDK gets an httpx client
of its own: the factory adds ``A2A-Version: 1.0`` to a shared client's default headers,
which would break 0.3 JSON-RPC calls made with the same client.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping

import grpc
import httpx
from a2a.client import Client, ClientCallContext, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientError
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
)
from a2a.utils.errors import A2AError

from trpc_bridge.client.errors import RemoteCallError, failure_text
from trpc_bridge.client.tls import ClientTls
from trpc_bridge.codecs.a2a.frames import Frame
from trpc_bridge.codecs.a2a.proto_frames import read_proto
from trpc_bridge.codecs.errors import CodecError

log = logging.getLogger(__name__)

_FAILURES = (A2AError, A2AClientError, httpx.HTTPError, grpc.RpcError, ValueError)


class SdkTransport:
    def __init__(
        self,
        card: AgentCard,
        timeout: httpx.Timeout,
        tls: ClientTls | None = None,
        *,
        secure: bool = False,
    ) -> None:
        self._card = card
        tls = tls or ClientTls()
        self._http = httpx.AsyncClient(timeout=timeout, verify=tls.httpx_verify())
        self._channels = tls.channel_factory(secure)
        self._clients: dict[bool, Client] = {}

    def _client(self, streaming: bool) -> Client:
        client = self._clients.get(streaming)
        if client is None:
            binding = self._card.supported_interfaces[0].protocol_binding
            config = ClientConfig(
                streaming=streaming,
                httpx_client=self._http,
                grpc_channel_factory=self._channels,
                supported_protocol_bindings=[binding],
            )
            client = self._clients[streaming] = ClientFactory(config).create(self._card)
        return client

    @staticmethod
    def _context(headers: Mapping[str, str]) -> ClientCallContext:
        # Headers on HTTP, lower-cased metadata on gRPC (x-user-id, traceparent).
        return ClientCallContext(service_parameters=dict(headers))

    @staticmethod
    async def _frames(
        responses: AsyncIterator[StreamResponse], call: str
    ) -> AsyncGenerator[Frame, None]:
        try:
            async for response in responses:
                try:
                    frame = read_proto(response)
                except CodecError as exc:
                    log.warning("skipping an unreadable %s result: %s", call, exc)
                    continue
                yield frame
        except _FAILURES as exc:
            raise RemoteCallError(f"{call} failed: {failure_text(exc)}") from exc

    def stream(self, message: Message, headers: Mapping[str, str]) -> AsyncGenerator[Frame, None]:
        responses = self._client(streaming=True).send_message(
            SendMessageRequest(message=message), context=self._context(headers)
        )
        return self._frames(responses, "stream")

    def subscribe(self, task_id: str, headers: Mapping[str, str]) -> AsyncGenerator[Frame, None]:
        responses = self._client(streaming=True).subscribe(
            SubscribeToTaskRequest(id=task_id), context=self._context(headers)
        )
        return self._frames(responses, "subscribe")

    async def send(
        self, message: Message, headers: Mapping[str, str], *, return_immediately: bool = False
    ) -> Frame:
        client = self._client(streaming=False)
        request = SendMessageRequest(message=message)
        if return_immediately:
            request.configuration.return_immediately = True
        last: StreamResponse | None = None
        try:
            async for response in client.send_message(request, context=self._context(headers)):
                last = response
            if last is None:
                raise RemoteCallError("send returned no result")
            return read_proto(last)
        except _FAILURES as exc:
            raise RemoteCallError(f"send failed: {failure_text(exc)}") from exc

    async def get_task(self, task_id: str, headers: Mapping[str, str]) -> Frame:
        try:
            task = await self._client(streaming=False).get_task(
                GetTaskRequest(id=task_id), context=self._context(headers)
            )
            return read_proto(task)
        except _FAILURES as exc:
            raise RemoteCallError(f"get task failed: {failure_text(exc)}") from exc

    async def cancel_task(self, task_id: str, headers: Mapping[str, str]) -> None:
        try:
            await self._client(streaming=False).cancel_task(
                CancelTaskRequest(id=task_id), context=self._context(headers)
            )
        except _FAILURES as exc:
            raise RemoteCallError(f"cancel failed: {failure_text(exc)}") from exc

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
        await self._http.aclose()
