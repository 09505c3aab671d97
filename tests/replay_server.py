"""A tiny HTTP peer on 127.0.0.1 that replays trpc-agent-go's exact bytes.

It serves a card (at the paths given), answers ``message/stream`` (or 1.0's
``SendStreamingMessage``) with a prepared SSE body (``event:`` lines, JSON-RPC envelopes,
optional ``: ping`` comments, optionally hanging until the client cancels),
``message/send`` (``SendMessage``) with a prepared result, and
``tasks/get`` / ``tasks/cancel`` the way a v0 Go server does after a stream (task not
found). Every request is recorded for assertions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from trpc_bridge.codecs.trpc.keys import go_json
from trpc_bridge.server.http.listener import HttpListener

#: trpc-agent-go's v0 card (S20), served without protocolVersion.
GO_CARD: dict[str, Any] = {
    "name": "weather-agent",
    "description": "Weather",
    "url": "",  # filled with the server's address
    "version": "",
    "capabilities": {
        "streaming": True,
        "extensions": [{"uri": "trpc-a2a-version", "params": {"version": "0.1"}}],
    },
    "defaultInputModes": ["text"],
    "defaultOutputModes": ["text"],
    "skills": [
        {
            "id": "",
            "name": "weather-agent",
            "description": "Weather",
            "tags": ["default"],
            "inputModes": ["text"],
            "outputModes": ["text"],
        }
    ],
}

_EVENT_NAMES = {
    "status-update": "task_status_update",
    "artifact-update": "task_artifact_update",
    "message": "message",
    "task": "task",
}


def go_sse_frame(result: dict[str, Any], rpc_id: str = "r1") -> bytes:
    """One SSE frame as trpc-a2a-go writes it: ``event: <name>`` then the envelope,
    compact and HTML-escaped (Go's encoder; key order does not matter to readers)."""
    envelope = go_json({"jsonrpc": "2.0", "id": rpc_id, "result": result})
    return f"event: {_EVENT_NAMES[result['kind']]}\ndata: {envelope}\n\n".encode()


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class ReplayPeer:
    card: dict[str, Any] = field(default_factory=lambda: json.loads(json.dumps(GO_CARD)))
    card_paths: tuple[str, ...] = ("/.well-known/agent-card.json", "/.well-known/agent.json")
    #: The body of the answer to message/stream, chunk by chunk.
    stream_chunks: list[bytes] = field(default_factory=list)
    #: Keep the stream open after the chunks until the client goes away.
    hang: bool = False
    #: A non-SSE JSON body answering message/stream instead (an early error).
    stream_json: dict[str, Any] | None = None
    send_result: Any = None
    #: The answer to ``GetExtendedAgentCard`` (None: not found).
    extended_card: dict[str, Any] | None = None
    calls: list[Recorded] = field(default_factory=list)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    url: str = ""

    def methods(self) -> list[str]:
        return [c.body.get("method", "") for c in self.calls]

    async def _card(self, request: Request) -> Response:
        if request.url.path not in self.card_paths:
            return Response(status_code=404)
        return JSONResponse(self.card)

    async def _rpc(self, request: Request) -> Response:
        body = await request.json()
        self.calls.append(Recorded(request.method, request.url.path, dict(request.headers), body))
        method, rpc_id = body.get("method"), body.get("id")
        if method in ("message/stream", "SendStreamingMessage"):
            if self.stream_json is not None:
                return JSONResponse(self.stream_json)
            return StreamingResponse(self._replay(), media_type="text/event-stream")
        if method in ("message/send", "SendMessage"):
            return JSONResponse({"jsonrpc": "2.0", "id": rpc_id, "result": self.send_result})
        if method == "GetExtendedAgentCard" and self.extended_card is not None:
            return JSONResponse({"jsonrpc": "2.0", "id": rpc_id, "result": self.extended_card})
        if method == "tasks/cancel":
            self.cancelled.set()
        # A v0 Go server deletes its streaming task at the end: get/cancel find nothing.
        error = {"code": -32001, "message": "task not found"}
        return JSONResponse({"jsonrpc": "2.0", "id": rpc_id, "error": error})

    async def _replay(self) -> AsyncIterator[bytes]:
        for chunk in self.stream_chunks:
            yield chunk
        if self.hang:
            await self.cancelled.wait()

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/{name}", self._card, methods=["GET"]),
                Route("/{path:path}", self._rpc, methods=["POST"]),
            ]
        )


@contextlib.asynccontextmanager
async def serving(peer: ReplayPeer) -> AsyncIterator[str]:
    """Run ``peer`` on a free loopback port; yields its base URL."""
    listener = HttpListener()  # bound first: the card names the peer's URL
    peer.url = listener.url
    if "url" in peer.card:  # a 0.3 card names its URL (a 1.0 card, its interfaces)
        peer.card["url"] = peer.card["url"] or listener.url
    await listener.start(peer.app())
    try:
        yield listener.url
    finally:
        peer.cancelled.set()
        await listener.stop()
