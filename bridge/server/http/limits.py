"""HTTP request limits enforced before a2a-sdk sees the body, and their defaults.

- Bodies larger than ``max_bytes`` → HTTP 413 (by ``Content-Length`` up front, else while
  reading a chunked body), with a JSON-RPC ``-32600`` error on JSON-RPC paths.
- A body not received in full within ``body_timeout`` seconds → HTTP 408 (``-32600`` on
  JSON-RPC paths) and the connection is closed: a client that sends its body slowly or
  not at all cannot hold the connection.

The other limits live where the HTTP server applies them (:mod:`~trpc_bridge.server.http.listener`):
the request-head deadline and size (:mod:`~trpc_bridge.server.http.connection`), the idle
keep-alive and the connection cap. Media types are checked by
:mod:`trpc_bridge.server.http.media_types`. gRPC has its own size limit
(``grpc.max_receive_message_length`` → RESOURCE_EXHAUSTED), and its metadata (the request
head of a call) the same bound as an HTTP head.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from trpc_bridge.server.http.exchange import Exchange
from trpc_bridge.server.options import Limits

INVALID_REQUEST = -32600


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that first hands out ``body`` (already read) in one message."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class _TooLarge(Exception):
    pass


def _buffered(receive: Receive) -> bool:
    """The whole request body has arrived: ``receive`` is the bound method of the
    bridge's own :class:`~trpc_bridge.server.http.exchange.Exchange` (its listener, no
    wrapper in between) and the exchange says so. Anything else is read under the
    deadline."""
    exchange = getattr(receive, "__self__", None)
    return type(exchange) is Exchange and exchange.body_in


class RequestLimits:
    """ASGI middleware; ``jsonrpc_paths`` are the exact paths of the JSON-RPC routes."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int,
        jsonrpc_paths: Iterable[str],
        body_timeout: float = Limits.body_timeout,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.jsonrpc_paths = frozenset(jsonrpc_paths)
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        jsonrpc = scope["path"] in self.jsonrpc_paths
        declared = b""
        for name, value in scope["headers"]:  # the last one counts
            if name.lower() == b"content-length":
                declared = value
        if declared.isdigit() and int(declared) > self.max_bytes:
            await _reject(send, 413, "Payload too large", jsonrpc=jsonrpc)
            return
        try:
            if _buffered(receive):  # reading it cannot wait: no deadline to arm
                body = await self._read(receive)
            else:
                async with asyncio.timeout(self.body_timeout):
                    body = await self._read(receive)
        except TimeoutError:
            message = f"request body not received within {self.body_timeout:g} s"
            await _reject(send, 408, message, jsonrpc=jsonrpc, close=True)
            return
        except _TooLarge:
            await _reject(send, 413, "Payload too large", jsonrpc=jsonrpc)
            return
        if body is not None:  # None: the client left
            await self.app(scope, replaying(body, receive), send)

    async def _read(self, receive: Receive) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


async def _reject(
    send: Send, status: int, message: str, *, jsonrpc: bool, close: bool = False
) -> None:
    if jsonrpc:
        payload: dict[str, object] = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": INVALID_REQUEST, "message": message},
        }
    else:
        payload = {"error": {"code": status, "message": message}}
    body = json.dumps(payload).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
