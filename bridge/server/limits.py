"""HTTP request limits enforced before a2a-sdk sees the body.

Bodies larger than ``max_bytes`` → HTTP 413 (by ``Content-Length`` up front, else while
reading a chunked body), with a JSON-RPC ``-32600`` error on JSON-RPC paths. Media types
are checked by :mod:`trpc_bridge.server.media_types`.

gRPC has its own limit (``grpc.max_receive_message_length`` → RESOURCE_EXHAUSTED).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

DEFAULT_MAX_REQUEST_BYTES = 10 * 1024 * 1024
INVALID_REQUEST = -32600


class RequestLimits:
    """ASGI middleware; ``jsonrpc_paths`` are the exact paths of the JSON-RPC routes."""

    def __init__(self, app: ASGIApp, *, max_bytes: int, jsonrpc_paths: Iterable[str]) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.jsonrpc_paths = frozenset(jsonrpc_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        jsonrpc = scope["path"] in self.jsonrpc_paths
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._reject(send, 413, "Payload too large", jsonrpc=jsonrpc)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._reject(send, 413, "Payload too large", jsonrpc=jsonrpc)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _reject(self, send: Send, status: int, message: str, *, jsonrpc: bool) -> None:
        if jsonrpc:
            payload: dict[str, object] = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": INVALID_REQUEST, "message": message},
            }
        else:
            payload = {"error": {"code": status, "message": message}}
        body = json.dumps(payload).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
