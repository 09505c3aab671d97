"""A deadline and a size bound for every HTTP request head, which uvicorn has neither of.

**Deadline.** uvicorn closes a connection that stays idle after a response
(``timeout_keep_alive``) but waits for ever on one that sent half a request head: a few
hundred such connections (slowloris) hold sockets and memory for as long as their sender
likes. The protocol here gives each request head a deadline, counted from the
connection's start or the end of the previous response and not extended by bytes that
trickle in: a head not complete by then is answered ``408 Request Timeout`` and the
connection closed. Request *bodies* have their own deadline in
:class:`~trpc_bridge.server.http.limits.RequestLimits`.

**Size.** httptools accumulates a header line (and uvicorn the URL) for as long as its
bytes keep coming: one 50 MB header was accepted, and a few of them at once grew the
process by hundreds of MB that it never gave back. Here the parser is fed at most
``max_header_bytes`` bytes of a head: the head that would need more, or that has more
than ``max_header_lines`` header lines, is answered ``431 Request Header Fields Too
Large`` and the connection closed; nothing past the bound is buffered. After the answer
the server stops sending and reads (and drops) what the client still sends for a moment
before it closes, so that the client reads the 431 rather than a reset.

A head that starts inside the read that completed a previous request (pipelining) is
counted from the next read on: it may reach the bound plus one read before it is refused.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from trpc_bridge.server.auth.tls import tls_scope_extension
from trpc_bridge.server.refusals import log_refusal

_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
)
#: Seconds a refused connection is read (and its bytes dropped) before it is closed.
LINGER = 2.0
#: Bytes dropped during that linger at most; a client that sends more is cut off at once.
LINGER_BYTES = 4 * 1024 * 1024


def _too_large_response(reason: str) -> bytes:
    body = reason.encode()
    head = (
        "HTTP/1.1 431 Request Header Fields Too Large\r\n"
        "content-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


def head_limits_protocol(
    header_timeout: float, max_header_bytes: int, max_header_lines: int
) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol (C parser and response writer: about 20 % less CPU per
    request than its h11 one) with a ``header_timeout`` (seconds) deadline per request head
    and at most ``max_header_bytes`` bytes and ``max_header_lines`` header lines in it;
    pass it as ``uvicorn.Config(http=...)``. On a TLS connection each request's scope also
    carries the ASGI TLS extension (the client certificate: ``server/auth``), which uvicorn
    does not write."""

    class HeadLimits(HttpToolsProtocol):
        _head_timer: asyncio.TimerHandle | None = None
        #: The next bytes are (or may start) a request head, not a body.
        _in_head = True
        #: Bytes of the current head fed to the parser, and its header lines so far.
        _head_bytes = 0
        _head_lines = 0
        #: Answered 431: what still comes is dropped until the connection closes.
        _refused = False
        _dropped = 0
        _tls: dict[object, object] | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._tls = tls_scope_extension(transport)
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._tls is not None:
                self.scope["extensions"] = {"tls": self._tls}

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._refused:
                self._dropped += len(data)
                if self._dropped > LINGER_BYTES:
                    self.transport.close()
                return
            rest = memoryview(data)
            while rest and not self._refused and not self.transport.is_closing():
                if self._in_head:
                    room = max_header_bytes - self._head_bytes
                    if room <= 0:
                        self._refuse(f"request head larger than {max_header_bytes} bytes")
                        return
                    piece = rest[:room]
                    self._head_bytes += len(piece)
                else:  # a body: its own limits are RequestLimits'
                    piece = rest
                rest = rest[len(piece) :]
                super().data_received(piece)  # type: ignore[arg-type]  # httptools reads buffers

        def on_header(self, name: bytes, value: bytes) -> None:
            if self._refused:
                return
            self._head_lines += 1
            if self._head_lines > max_header_lines:
                self._refuse(f"more than {max_header_lines} header lines")
                return
            super().on_header(name, value)

        def on_headers_complete(self) -> None:
            if self._refused:
                return  # the parser finishes its piece; nothing of it is served
            self._in_head = False
            self._head_bytes = self._head_lines = 0
            super().on_headers_complete()
            self._disarm()  # a whole head arrived: the request runs (or waits, pipelined)

        def on_body(self, body: bytes) -> None:
            if not self._refused:
                super().on_body(body)

        def on_message_complete(self) -> None:
            if self._refused:
                return
            self._in_head = True  # what follows is the next request's head
            super().on_message_complete()

        def on_response_complete(self) -> None:
            self._arm()  # first: a pipelined request started below disarms it again
            super().on_response_complete()

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(header_timeout, self._head_timed_out)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _client(self) -> str:
            host, port = self.client or ("?", 0)
            return f"{host}:{port}"

        def _head_timed_out(self) -> None:
            self._head_timer = None
            busy = self.cycle is not None and not self.cycle.response_complete
            if busy or self.transport.is_closing() or self._refused:
                return
            log_refusal(
                "HTTP connection",
                self._client(),
                f"no complete request head within {header_timeout:g} s: 408, closed",
            )
            self.transport.write(_TIMEOUT_RESPONSE)
            self.transport.close()

        def _refuse(self, reason: str) -> None:
            """431, then stop sending, drop what still comes, close after :data:`LINGER`."""
            self._refused = True
            self._disarm()
            log_refusal("HTTP connection", self._client(), f"{reason}: 431, closed")
            self.transport.write(_too_large_response(reason))
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self.loop.call_later(LINGER, self.transport.close)

    return HeadLimits
