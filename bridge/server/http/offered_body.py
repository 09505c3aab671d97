"""The body of a request whose ``Upgrade`` offer the server ignored.

A client may offer another protocol on any request (RFC 9110 §7.8); the JDK's HTTP client
offers ``Upgrade: h2c`` on every plain-HTTP request, body included. The bridge serves no
other protocol, so every offer is ignored, as HTTP allows. httptools' parser stops at such
a head and would hand what follows to the "upgraded" protocol: :class:`OfferedBody` reads
the body that follows with the head's own framing (``Content-Length`` or chunked) by a
parser of its own, and the connection (``server/http/connection.py``) closes after the
answer, since its parser can read no further request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import httptools

from trpc_bridge.server.http.exchange import Exchange

#: The headers that say how a request body is framed.
_FRAMING = (b"content-length", b"transfer-encoding")


class OfferedBody:
    """Reads the offered request's body into its exchange; ``on_body`` is the
    connection's own (it pauses reading when the body piles up)."""

    def __init__(
        self,
        exchange: Exchange,
        framing: Sequence[tuple[bytes, bytes]],
        on_body: Callable[[bytes], None],
    ) -> None:
        self._exchange = exchange
        self.on_body = on_body
        self.complete = False
        self._parser = httptools.HttpRequestParser(self)
        head = b"".join(name + b": " + value + b"\r\n" for name, value in framing)
        self._parser.feed_data(b"POST / HTTP/1.1\r\n" + head + b"\r\n")
        exchange.more_body = True

    @classmethod
    def of(cls, exchange: Exchange, on_body: Callable[[bytes], None]) -> OfferedBody | None:
        """The reader of ``exchange``'s body; None when its head frames none (the request
        is complete as it runs)."""
        framing = [(k, v) for k, v in exchange.scope["headers"] if k in _FRAMING]
        return cls(exchange, framing, on_body) if framing else None

    def feed(self, data: bytes) -> bool:
        """Reads ``data``; False when it is not a body of the head's framing. What
        follows the body is not read: the connection closes."""
        if self.complete or not data:
            return True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            return False
        return True

    def on_message_complete(self) -> None:  # httptools' callback: the body is all there
        self.complete = True
        self._exchange.more_body = False
        self._exchange.message_event.set()
