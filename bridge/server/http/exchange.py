"""One request and its response on an HTTP/1.1 connection, as ASGI sees them: the
``receive`` and ``send`` of the request's app call (``server/http/connection.py`` parses
the request and starts it).

The response is framed as the app's headers say: by its ``content-length`` (checked
against what is sent), else chunked (no body at all for ``HEAD``, 204 and 304). Header
names and values the app gives are checked for the bytes HTTP forbids in them, so no
header can smuggle a line break into the head. Writes go to the connection's
:class:`~trpc_bridge.server.http.one_write.TurnWrites`: a response's writes of one turn of
the event loop leave as one.
"""

from __future__ import annotations

import asyncio
import http
import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from trpc_bridge.server.http.one_write import TurnWrites

if TYPE_CHECKING:
    from trpc_bridge.server.http.connection import HttpConnection

logger = logging.getLogger("uvicorn.error")

#: Bytes HTTP forbids in a header name (RFC 9110 §5.1 token) and value (§5.5: controls
#: but tab).
_BAD_NAME = re.compile(b'[\x00-\x1f\x7f()<>@,;:\\[\\]={} \t\\\\"]')
_BAD_VALUE = re.compile(b"[\x00-\x08\x0a-\x1f\x7f]")


def _status_line(code: int) -> bytes:
    try:
        phrase = http.HTTPStatus(code).phrase.encode()
    except ValueError:
        phrase = b""
    return b"HTTP/1.1 %d %s\r\n" % (code, phrase)


STATUS_LINES = {code: _status_line(code) for code in range(100, 600)}
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
_LAST_CHUNK = b"0\r\n\r\n"
#: Statuses whose responses have no body (RFC 9110 §6.4.1).
_BODYLESS = frozenset({204, 304})


class Exchange:
    """A request's ASGI ``receive`` / ``send`` (see the module doc)."""

    __slots__ = (
        "body",
        "chunked",
        "connection",
        "disconnected",
        "keep_alive",
        "message_event",
        "more_body",
        "on_response",
        "remaining",
        "response_complete",
        "response_started",
        "scope",
        "transport",
        "waiting_for_100_continue",
    )

    def __init__(
        self,
        connection: HttpConnection,
        scope: dict[str, Any],
        *,
        keep_alive: bool,
        expect_100_continue: bool,
    ) -> None:
        self.connection = connection
        self.scope = scope
        self.transport = TurnWrites(connection.transport, connection.loop)
        self.keep_alive = keep_alive
        self.waiting_for_100_continue = expect_100_continue
        #: Set when body bytes arrive, the request ends, the response ends or the peer
        #: goes away: what ``receive`` waits for.
        self.message_event = asyncio.Event()
        self.on_response: Callable[[], None] = connection.on_response_complete
        self.disconnected = False
        # The request's body as it arrives.
        self.body = bytearray()
        self.more_body = True
        # The response.
        self.response_started = False
        self.response_complete = False
        self.chunked = False
        #: Bytes of a ``content-length`` body still to send.
        self.remaining = 0

    async def run(self, app: Any) -> None:
        """The app on this request; a failure answers 500 if nothing was sent yet, else
        cuts the response short (the client sees it incomplete)."""
        try:
            result = await app(self.scope, self.receive, self.send)
        except BaseException as exc:
            logger.error("Exception in ASGI application\n", exc_info=exc)
            if not self.response_started:
                await self._send_500()
            else:
                self.transport.close()
        else:
            if result is not None:
                logger.error("ASGI callable should return None, but returned '%s'.", result)
                self.transport.close()
            elif not self.response_started and not self.disconnected:
                logger.error("ASGI callable returned without starting response.")
                await self._send_500()
            elif not self.response_complete and not self.disconnected:
                logger.error("ASGI callable returned without completing response.")
                self.transport.close()
        finally:
            self.on_response = _nothing

    async def _send_500(self) -> None:
        await self.send(
            {
                "type": "http.response.start",
                "status": 500,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", b"21"),
                    (b"connection", b"close"),
                ],
            }
        )
        await self.send({"type": "http.response.body", "body": b"Internal Server Error"})

    @property
    def body_in(self) -> bool:
        """The whole request body has arrived and nothing holds it back: reading it
        cannot wait."""
        return (
            self.more_body is False and not self.disconnected and not self.waiting_for_100_continue
        )

    async def receive(self) -> dict[str, Any]:
        if self.waiting_for_100_continue and not self.connection.transport.is_closing():
            self.transport.write(_CONTINUE)
            self.waiting_for_100_continue = False
        if not self.disconnected and not self.response_complete:
            self.connection.resume_reading()
            await self.message_event.wait()
            self.message_event.clear()
        if self.disconnected or self.response_complete:
            return {"type": "http.disconnect"}
        message = {"type": "http.request", "body": bytes(self.body), "more_body": self.more_body}
        self.body = bytearray()
        return message

    async def send(self, message: Any) -> None:
        connection = self.connection
        if connection.write_paused and not self.disconnected:
            await connection.drain()
        if self.disconnected:
            return
        kind = message["type"]
        if not self.response_started:
            if kind != "http.response.start":
                raise RuntimeError(f"Expected 'http.response.start', but got '{kind}'.")
            self._start(message)
        elif not self.response_complete:
            if kind != "http.response.body":
                raise RuntimeError(f"Expected 'http.response.body', but got '{kind}'.")
            self._body(message.get("body", b""), message.get("more_body", False))
        else:
            raise RuntimeError(
                f"Unexpected ASGI message '{kind}' sent, after response already completed."
            )

    def _start(self, message: Any) -> None:
        # Everything is checked before the response counts as started: a header HTTP
        # forbids fails the app, which is then answered 500 rather than cut short.
        status = message["status"]
        content = [STATUS_LINES[status], self.connection.default_head()]
        remaining, framed, chunked, close = 0, False, False, False
        for name, value in message.get("headers", ()):
            if _BAD_NAME.search(name):
                raise RuntimeError("Invalid HTTP header name.")
            if _BAD_VALUE.search(value):
                raise RuntimeError("Invalid HTTP header value.")
            name = name.lower()
            if name == b"content-length" and not framed:
                remaining, framed = int(value.decode()), True
            elif name == b"transfer-encoding" and value.lower() == b"chunked":
                remaining, framed, chunked = 0, True, True
            elif name == b"connection" and b"close" in (
                token.strip() for token in value.lower().split(b",")
            ):
                close = True
            content += (name, b": ", value, b"\r\n")
        if close:
            self.keep_alive = False
        elif not self.keep_alive:
            content.append(b"connection: close\r\n")
        if not framed and self.scope["method"] != "HEAD" and status not in _BODYLESS:
            chunked = True
            content.append(b"transfer-encoding: chunked\r\n")
        content.append(b"\r\n")
        self.remaining, self.chunked = remaining, chunked
        self.response_started = True
        self.waiting_for_100_continue = False
        self.transport.write(b"".join(content))

    def _body(self, body: bytes, more_body: bool) -> None:
        if self.scope["method"] == "HEAD":
            self.remaining = 0
        elif self.chunked:
            if body:
                end = b"" if more_body else _LAST_CHUNK
                self.transport.write(b"%x\r\n%s\r\n%s" % (len(body), body, end))
            elif not more_body:
                self.transport.write(_LAST_CHUNK)
        else:
            if len(body) > self.remaining:
                raise RuntimeError("Response content longer than Content-Length")
            self.remaining -= len(body)
            if body:
                self.transport.write(body)
        if more_body:
            return
        if self.remaining != 0:
            raise RuntimeError("Response content shorter than Content-Length")
        self.response_complete = True
        self.message_event.set()
        if not self.keep_alive:
            self.transport.end(plain=self.connection.scheme == "http")
        else:
            self.transport.flush()  # its caller has it before what follows in this turn
        self.on_response()


def _nothing() -> None:
    pass
