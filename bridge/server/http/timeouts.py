"""The HTTP/1.1 connection protocol of every bridge server: uvicorn's httptools protocol
with a deadline for every request head, which uvicorn does not have, and with an
``Upgrade`` other than WebSocket ignored as HTTP allows.

uvicorn closes a connection that stays idle after a response (``timeout_keep_alive``)
but waits for ever on one that sent half a request head: a few hundred such connections
(slowloris) hold sockets and memory for as long as their sender likes. The protocol here
gives each request head a deadline, counted from the connection's start or the end of
the previous response and not extended by bytes that trickle in: a head not complete by
then is answered ``408 Request Timeout`` and the connection closed. Request *bodies*
have their own deadline in :class:`~trpc_bridge.server.http.limits.RequestLimits`.

A client may offer another protocol on any request (RFC 9110 §7.8); the JDK's HTTP client
offers ``Upgrade: h2c`` on every plain-HTTP request, body included. httptools' parser stops
at such a head and hands what follows to the "upgraded" protocol, so uvicorn ran the
request with an empty body (a ``-32700`` for a JSON-RPC call). A server may ignore the
offer and go on in HTTP/1.1: here the body that follows is read with the head's own
framing (``Content-Length`` or chunked) by a second parser, and the connection is closed
after the answer, since the first parser can read no further request on it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httptools
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from trpc_bridge.server.auth.tls import tls_scope_extension
from trpc_bridge.server.refusals import log_refusal

_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
)


#: The headers that say how a request body is framed (the ignored upgrade's second parser
#: reads the body with them).
_FRAMING = (b"content-length", b"transfer-encoding")


class _UpgradeOffset:
    """The connection's parser, remembering where an upgrade offer's head ended."""

    def __init__(self, parser: httptools.HttpRequestParser) -> None:
        self._parser = parser
        self.offset = 0

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


def head_deadline_protocol(header_timeout: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol (C parser and response writer: about 20 % less CPU per
    request than its h11 one) with a ``header_timeout`` (seconds) deadline per request
    head; pass it as ``uvicorn.Config(http=...)``. On a TLS connection each request's
    scope also carries the ASGI TLS extension (the client certificate: ``server/auth``),
    which uvicorn does not write. An ``Upgrade`` offer other than WebSocket is ignored
    (see the module doc)."""

    class HeadDeadline(HttpToolsProtocol):
        _head_timer: asyncio.TimerHandle | None = None
        _tls: dict[object, object] | None = None
        #: The body of a request whose upgrade offer was ignored, while it arrives.
        _offered: tuple[httptools.HttpRequestParser, _OfferedBody] | None = None
        _upgrade_ignored = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.parser = _UpgradeOffset(self.parser)  # type: ignore[assignment]
            self._tls = tls_scope_extension(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._offered is not None:
                self._read_offered_body(data)
                return
            super().data_received(data)
            if self._upgrade_ignored:
                self._upgrade_ignored = False
                self._start_offered_body(data[self.parser.offset :])  # type: ignore[attr-defined]

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

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            self._disarm()  # a whole head arrived: the request runs (or waits, pipelined)

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

        def _head_timed_out(self) -> None:
            self._head_timer = None
            busy = self.cycle is not None and not self.cycle.response_complete
            if busy or self.transport.is_closing():
                return
            host, port = self.client or ("?", 0)
            log_refusal(
                "HTTP connection",
                f"{host}:{port}",
                f"no complete request head within {header_timeout:g} s: 408, closed",
            )
            self.transport.write(_TIMEOUT_RESPONSE)
            self.transport.close()

    return HeadDeadline
