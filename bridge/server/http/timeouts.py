"""The HTTP/1.1 connection protocol of every bridge server: uvicorn's httptools protocol
with a deadline and a size bound for every request head, which uvicorn has neither of,
and with an ``Upgrade`` other than WebSocket ignored as HTTP allows.

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

**Upgrade offers.** A client may offer another protocol on any request (RFC 9110 §7.8);
the JDK's HTTP client offers ``Upgrade: h2c`` on every plain-HTTP request, body included.
httptools' parser stops at such a head and hands what follows to the "upgraded" protocol,
so uvicorn ran the request with an empty body (a ``-32700`` for a JSON-RPC call). A server
may ignore the offer and go on in HTTP/1.1: here the body that follows is read with the
head's own framing (``Content-Length`` or chunked) by a second parser, and the connection
is closed after the answer, since the first parser can read no further request on it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httptools
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from trpc_bridge.server.auth.tls import tls_scope_extension
from trpc_bridge.server.http.one_write import TurnWrites
from trpc_bridge.server.refusals import log_refusal

_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
)
#: Seconds a refused connection is read (and its bytes dropped) before it is closed.
LINGER = 2.0
#: Bytes dropped during that linger at most; a client that sends more is cut off at once.
LINGER_BYTES = 4 * 1024 * 1024


#: The headers that say how a request body is framed (the ignored upgrade's second parser
#: reads the body with them).
_FRAMING = (b"content-length", b"transfer-encoding")


class _UpgradeOffset:
    """The connection's parser, remembering where an upgrade offer's head ended."""

    def __init__(self, parser: httptools.HttpRequestParser) -> None:
        self._parser = parser
        self.offset = 0
        # What uvicorn asks the parser on every request, bound here: found through
        # ``__getattr__`` each would first fail the usual lookup (an AttributeError made
        # and dropped, six per request).
        self.get_http_version = parser.get_http_version
        self.get_method = parser.get_method
        self.should_upgrade = parser.should_upgrade
        self.should_keep_alive = parser.should_keep_alive

    def feed_data(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade as exc:
            self.offset = int(exc.args[0]) if exc.args else len(data)
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parser, name)


class _OfferedBody:
    """Parser callbacks for the body of a request whose upgrade offer was ignored: the
    pieces go to the request's cycle as uvicorn's own ``on_body`` puts them there."""

    def __init__(self, protocol: HttpToolsProtocol) -> None:
        self.protocol = protocol
        self.complete = False

    def on_body(self, body: bytes) -> None:
        cycle = self.protocol.cycle
        cycle.body += body
        if len(cycle.body) > HIGH_WATER_LIMIT:
            self.protocol.flow.pause_reading()
        cycle.message_event.set()

    def on_message_complete(self) -> None:
        self.complete = True
        self.protocol.cycle.more_body = False
        self.protocol.cycle.message_event.set()


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
    does not write. An ``Upgrade`` offer other than WebSocket is ignored (see the module
    doc)."""

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
        #: The body of a request whose upgrade offer was ignored, while it arrives.
        _offered: tuple[httptools.HttpRequestParser, _OfferedBody] | None = None
        _upgrade_ignored = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.parser = _UpgradeOffset(self.parser)  # type: ignore[assignment]
            self._tls = tls_scope_extension(transport)
            self._arm()

        def _unsupported_upgrade_warning(self) -> None:
            # Called by uvicorn for an upgrade it will not make: go on in HTTP/1.1.
            self._upgrade_ignored = True

        def _start_offered_body(self, rest: bytes) -> None:
            cycle = self.cycle
            if cycle is None or cycle.response_complete:
                return
            cycle.keep_alive = False  # the connection's parser can read no further request
            framing = [(k, v) for k, v in self.scope["headers"] if k in _FRAMING]
            if not framing:
                return  # no body: the request is complete as uvicorn ran it
            cycle.more_body = True
            callbacks = _OfferedBody(self)
            body_parser = httptools.HttpRequestParser(callbacks)
            head = b"".join(k + b": " + v + b"\r\n" for k, v in framing)
            body_parser.feed_data(b"POST / HTTP/1.1\r\n" + head + b"\r\n")
            self._offered = (body_parser, callbacks)
            self._read_offered_body(rest)

        def _read_offered_body(self, data: bytes) -> None:
            assert self._offered is not None
            body_parser, callbacks = self._offered
            if callbacks.complete or not data:
                return  # what follows the body is not read: the connection closes
            try:
                body_parser.feed_data(data)
            except httptools.HttpParserError:
                self.send_400_response("Invalid HTTP request body.")

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._tls is not None:
                self.scope["extensions"] = {"tls": self._tls}

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._offered is not None:
                self._read_offered_body(data)
                return
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
                if self._upgrade_ignored:
                    self._upgrade_ignored = False
                    offset = self.parser.offset  # type: ignore[attr-defined]
                    self._start_offered_body(bytes(piece[offset:]) + bytes(rest))
                    return

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
            before = self.cycle
            super().on_headers_complete()
            if self.cycle is not before:  # a request to answer (not a protocol switch)
                # Its response's writes of one loop turn leave as one (one_write); the
                # wrapper forwards everything else to the transport it stands for.
                self.cycle.transport = TurnWrites(self.transport, self.loop)  # type: ignore[assignment]
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
