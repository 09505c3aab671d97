"""A response's head written with the first bytes of its body, in one write.

uvicorn writes a response's head (status line and headers) as soon as the app starts the
response, then its body: two writes, so on a connection without Nagle (uvicorn sets
``TCP_NODELAY``) two TCP segments, and a reader woken twice for a small JSON answer.
:class:`HeadWithBody` is the transport a request's response is written to: it holds the
head until the body's first write and sends both at once; a head whose body does not
follow in the same turn of the event loop (a stream that waits for its first event) is
written at the end of that turn. The bytes are those uvicorn writes, in its order.
"""

from __future__ import annotations

import asyncio
from typing import Any

#: How every response head starts; an informational one (``100 Continue``) is not held.
_STATUS_LINE = b"HTTP/1.1 "
_INFORMATIONAL = b"HTTP/1.1 1"


class HeadWithBody:
    """``transport`` for one request's response (see the module doc); any other use of
    the transport goes to it unchanged."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None
        self._flush: asyncio.Handle | None = None
        self._head_seen = False

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:
            self._held = None
            assert self._flush is not None
            self._flush.cancel()
            self._transport.write(held + data)
            return
        if (
            not self._head_seen
            and data.startswith(_STATUS_LINE)
            and not data.startswith(_INFORMATIONAL)
        ):
            self._head_seen = True
            self._held = data
            self._flush = self._loop.call_soon(self._write_held)
            return
        self._transport.write(data)

    def _write_held(self) -> None:
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def close(self) -> None:
        if self._held is not None:
            assert self._flush is not None
            self._flush.cancel()
            self._write_held()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
