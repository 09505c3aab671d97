"""HTTP media types as A2A 1.0 specifies them (§9, §11.1, §5.4), enforced around a2a-sdk.

- A POST whose body is not JSON (``application/json`` or any ``+json`` type such as
  ``application/a2a+json``) is refused before a2a-sdk parses it: on a JSON-RPC path with
  ``ContentTypeNotSupportedError`` (``-32005``), elsewhere (REST) with HTTP 415 and the
  same error as an AIP-193 body. a2a-sdk checks neither.
- REST answers are labelled ``application/json`` (§11.1). a2a-sdk 1.2+ labels them
  ``application/a2a+json``, a media type clients that match ``application/json`` refuse.
  Server-Sent Events are left alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from a2a.utils.error_handlers import build_rest_error_payload
from a2a.utils.errors import ContentTypeNotSupportedError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_TYPE_NOT_SUPPORTED = -32005
_A2A_JSON = b"application/a2a+json"
_MESSAGE = "Content-Type must be application/json"


def is_json(media_type: str) -> bool:
    return media_type == "application/json" or media_type.endswith("+json")


class MediaTypes:
    """ASGI middleware. ``jsonrpc_paths`` get JSON-RPC errors; ``unchecked_paths`` (AG-UI,
    which answers its own errors) are passed through."""

    def __init__(
        self, app: ASGIApp, *, jsonrpc_paths: Iterable[str], unchecked_paths: Iterable[str]
    ) -> None:
        self.app = app
        self.jsonrpc_paths = frozenset(jsonrpc_paths)
        self.unchecked_paths = frozenset(unchecked_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.unchecked_paths:
            await self.app(scope, receive, send)
            return
        jsonrpc = scope["path"] in self.jsonrpc_paths
        if scope["method"] == "POST" and _has_body(headers := dict(scope["headers"])):
            raw = headers.get(b"content-type", b"").decode("latin-1")
            if not is_json(raw.split(";", 1)[0].strip().lower()):
                await _refuse(send, jsonrpc=jsonrpc)
                return
        if jsonrpc:
            await self.app(scope, receive, send)
            return

        async def relabel(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    (k, b"application/json") if k == b"content-type" and v == _A2A_JSON else (k, v)
                    for k, v in message.get("headers", [])
                ]
            await send(message)

        await self.app(scope, receive, relabel)


def _has_body(headers: dict[bytes, bytes]) -> bool:
    """A POST without a body (REST ``…:cancel`` from a2a-sdk) has no media type to check."""
    return headers.get(b"content-length", b"0") != b"0" or b"transfer-encoding" in headers


async def _refuse(send: Send, *, jsonrpc: bool) -> None:
    payload: dict[str, object]
    if jsonrpc:
        error = {"code": CONTENT_TYPE_NOT_SUPPORTED, "message": _MESSAGE}
        payload = {"jsonrpc": "2.0", "id": None, "error": error}
    else:
        payload = build_rest_error_payload(ContentTypeNotSupportedError(message=_MESSAGE))
        payload["error"]["code"] = 415  # type: ignore[index]
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 415, "headers": headers})
    await send({"type": "http.response.body", "body": body})
