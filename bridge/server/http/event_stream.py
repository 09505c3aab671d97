"""The Server-Sent Events response of the bridge's own streams: sse-starlette's bytes,
with one helper task per stream instead of four.

sse-starlette's ``EventSourceResponse`` (what a2a-sdk answers a stream with) runs each
response in an anyio task group of four tasks: the stream, a ping loop, a watcher of the
client's disconnect and one of the server's exit. On a short stream (a tool call and a
few deltas through ``trpc-bridge proxy``) setting up and tearing down that group costs
about a tenth of the request (``bench/README.md``). :class:`EventStream` writes the same
head and the same bytes, and keeps what those tasks are for:

- the client going away ends the stream: one watcher task waits for
  ``http.disconnect`` and cancels the response, whose iterator is closed (a task the
  stream follows goes on: A2A says a dropped stream does not cancel its task);
- a stream with nothing to say for :data:`PING_SECONDS` gets sse-starlette's comment
  ping, so proxies in between keep the connection open; the watcher sends it;
- the server's exit needs no watcher: the bridge ends its streams itself on shutdown
  (each with a final frame, ``docs/operations.md``), and uvicorn cancels what is left
  after its graceful timeout.

The head leaves with the first bytes of the body (or the first ping), not before: a
stream's first frames are ready within a few turns of the event loop, and what the
iterator does in them (a proxied run's request to its upstream, ``server/a2a/handler.py``)
goes first instead of a write of the head alone.

Its iterator yields SSE bytes (whole events); errors inside it are the iterator's to turn
into frames, as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

#: sse-starlette's default ping interval.
PING_SECONDS = 15.0


def ping_bytes() -> bytes:
    """sse-starlette's ping: a comment with the time."""
    return f": ping - {datetime.now(UTC)}\r\n\r\n".encode()


class EventStream(Response):
    """An SSE response of the bytes ``content`` yields (see the module doc)."""

    media_type = "text/event-stream"

    def __init__(self, content: AsyncIterator[bytes], *, ping: float = PING_SECONDS) -> None:
        self.body_iterator = content
        self.status_code = 200
        self.background = None
        self.ping = ping
        # sse-starlette's headers, in its order (content-type with its charset last).
        self.init_headers(
            {"Cache-Control": "no-store", "Connection": "keep-alive", "X-Accel-Buffering": "no"}
        )
        #: The body is complete: the watcher sends nothing more.
        self._ended = False
        #: The client went away (the watcher cancelled the response).
        self._gone = False
        #: The head was sent.
        self._started = False

    async def _body(self, send: Send, body: bytes, *, more: bool = True) -> None:
        """Send ``body``, after the head when it has not gone yet."""
        if not self._started:
            self._started = True
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": body, "more_body": more})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = asyncio.current_task()
        assert response is not None
        watcher = asyncio.get_running_loop().create_task(self._watch(receive, send, response))
        try:
            async for chunk in self.body_iterator:
                await self._body(send, chunk)
            self._ended = True
            # Cancelled before the last write: a ping it is sending is dropped, not
            # written after the end.
            watcher.cancel()
            await self._body(send, b"", more=False)
        except asyncio.CancelledError:
            if not self._gone:
                raise
            response.uncancel()  # the client's disconnect, not the server's: done
        finally:
            watcher.cancel()
            aclose = getattr(self.body_iterator, "aclose", None)
            if aclose is not None:  # a stream cut at a write: its cleanup runs now
                await aclose()

    async def _watch(self, receive: Receive, send: Send, response: asyncio.Task[None]) -> None:
        """Ping the client while the stream is quiet; cancel ``response`` when it leaves."""
        while True:
            try:
                async with asyncio.timeout(self.ping or None):
                    message = await receive()
            except TimeoutError:
                if not self._ended:
                    await self._body(send, ping_bytes())
                continue
            if message["type"] == "http.disconnect":
                self._gone = True
                response.cancel()
                return
