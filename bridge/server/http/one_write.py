"""A response's writes within one turn of the event loop sent as one write.

uvicorn writes a response's head (status line and headers) as soon as the app starts the
response, then each piece of its body as the app sends it, and for a chunked body a last
``0\\r\\n\\r\\n`` of its own: on a connection without Nagle (uvicorn sets ``TCP_NODELAY``)
each write is a TCP segment and, on loopback, a wake-up of the reader in the writer's own
time (about a fifth of a short proxied stream's time went to its five writes,
``bench/README.md``). :class:`TurnWrites` is the transport a request's response is
written to: it holds what is written until the end of the current turn of the event loop
and sends it at once. A small JSON answer leaves as one segment (head and body); a stream
writes once per batch of frames, its head with its first frames and its last frames with
the end of the body. Nothing waits longer than the turn it was written in; the bytes are
those uvicorn writes, in its order.
"""

from __future__ import annotations

import asyncio
from typing import Any


class TurnWrites:
    """``transport`` for one request's response (see the module doc); any other use of
    the transport goes to it unchanged."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        #: What was written in this turn (None: nothing held).
        self._held: list[bytes] | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is None:
            self._held = [data]
            self._loop.call_soon(self._flush)
        else:
            held.append(data)

    def _flush(self) -> None:
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
