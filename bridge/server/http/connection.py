"""The HTTP/1.1 connection protocol of every bridge server, run by uvicorn's server
(sockets, graceful shutdown): requests parsed with httptools, each run as ASGI
(:class:`~trpc_bridge.server.http.exchange.Exchange`), answered in order.

It is the bridge's own rather than uvicorn's httptools protocol with the bounds below
added around it: the same work in fewer layers took 7–9 % of the CPU of a proxied or
served ``message/send`` (``bench/README.md``).

**Deadline.** A connection that sends half a request head and then trickles or nothing
(slowloris) would hold a socket and memory for as long as its sender likes. Each request
head has a deadline, counted from the connection's start or the end of the previous
response and not extended by bytes that trickle in: a head not complete by then is
answered ``408 Request Timeout`` and the connection closed. An idle keep-alive connection
is closed after its own, shorter, wait. Request *bodies* have their own deadline in
:class:`~trpc_bridge.server.http.limits.RequestLimits`.

**Size.** httptools accumulates a header line (and the URL) for as long as its bytes keep
coming: one 50 MB header was accepted, and a few of them at once grew the process by
hundreds of MB that it never gave back. Here the parser is fed at most
``max_header_bytes`` bytes of a head: the head that would need more, or that has more
than ``max_header_lines`` header lines, is answered ``431 Request Header Fields Too
Large`` and the connection closed; nothing past the bound is buffered. After the answer
the server stops sending and reads (and drops) what the client still sends for a moment
before it closes, so that the client reads the 431 rather than a reset. A head that starts
inside the read that completed a previous request (pipelining) is counted from the next
read on: it may reach the bound plus one read before it is refused.

**Upgrade offers** are ignored, as HTTP allows: the offered request is answered in
HTTP/1.1, its body read by :class:`~trpc_bridge.server.http.offered_body.OfferedBody`.

**Load.** Past ``limit_concurrency`` open connections or running requests (uvicorn's
setting, the bridge's ``max_connections``) a request is answered 503. Pipelined requests
wait, unread, until the one before is answered. On TLS each request's scope carries the
ASGI TLS extension (the client certificate: ``server/auth``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any
from urllib.parse import unquote

import httptools
from uvicorn.config import Config
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT, service_unavailable
from uvicorn.server import ServerState

from trpc_bridge.server.auth.tls import tls_scope_extension
from trpc_bridge.server.http.exchange import STATUS_LINES, Exchange
from trpc_bridge.server.http.offered_body import OfferedBody
from trpc_bridge.server.refusals import log_refusal

logger = logging.getLogger("uvicorn.error")

_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
)
#: Seconds a refused connection is read (and its bytes dropped) before it is closed.
LINGER = 2.0
#: Bytes dropped during that linger at most; a client that sends more is cut off at once.
LINGER_BYTES = 4 * 1024 * 1024
#: The last server header list :meth:`HttpConnection.default_head` joined, and its bytes.
_joined_head: tuple[object, bytes] = (None, b"")


def _address(info: Any) -> tuple[str, int] | None:
    if isinstance(info, tuple) and len(info) >= 2:
        return (str(info[0]), int(info[1]))
    return None


def _too_large_response(reason: str) -> bytes:
    body = reason.encode()
    head = (
        "HTTP/1.1 431 Request Header Fields Too Large\r\n"
        "content-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class HttpConnection(asyncio.Protocol):
    """One HTTP/1.1 connection (see the module doc). :func:`http_protocol` makes the
    class uvicorn runs, with the bounds set."""

    #: Seconds a request head may take; its bytes and header lines at most.
    header_timeout = 10.0
    max_header_bytes = 64 * 1024
    max_header_lines = 100

    # A connection's state starts as these class defaults and becomes its own as it
    # changes: a connection per request (as many clients open) sets only what differs.
    server: tuple[str, int] | None = None
    client: tuple[str, int] | None = None
    scheme = "http"
    _tls: dict[object, object] | None = None
    # The request being parsed (``on_message_begin`` sets its url, headers and scope) and
    # the one being answered: the same unless pipelined, when the next wait in ``pipeline``.
    url = b""
    headers: list[tuple[bytes, bytes]]
    scope: dict[str, Any]
    expect_100_continue = False
    exchange: Exchange | None = None
    # Flow control.
    read_paused = False
    write_paused = False
    _writable: asyncio.Event | None = None
    # Deadlines: the request head's and the idle keep-alive wait's.
    _head_timer: asyncio.TimerHandle | None = None
    _idle_timer: asyncio.TimerHandle | None = None
    #: The next bytes are (or may start) a request head, not a body.
    _in_head = True
    #: Bytes of the current head fed to the parser, and its header lines so far.
    _head_bytes = 0
    _head_lines = 0
    #: Answered 431: what still comes is dropped until the connection closes.
    _refused = False
    _dropped = 0
    #: The body of a request whose upgrade offer was ignored, while it arrives.
    _offered: OfferedBody | None = None

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        if not config.loaded:
            config.load()
        self.app = config.loaded_app
        self.loop = _loop or asyncio.get_event_loop()
        self.root_path: str = config.root_path
        self.asgi_version = config.asgi_version
        self.limit_concurrency = config.limit_concurrency
        self.keep_alive_timeout = config.timeout_keep_alive
        self.app_state = app_state
        self.server_state = server_state
        self.parser = httptools.HttpRequestParser(self)
        # A request with ``Connection: close`` followed by more bytes (pipelined) is
        # still answered; what follows is not read.
        self.parser.set_dangerous_leniencies(lenient_data_after_close=True)
        self.transport: asyncio.Transport = None  # type: ignore[assignment]
        self.pipeline: deque[tuple[Exchange, Any]] = deque()

    # --- asyncio.Protocol ------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.server_state.connections.add(self)  # type: ignore[arg-type]
        self.transport = transport  # type: ignore[assignment]
        self.server = _address(transport.get_extra_info("sockname"))
        self.client = _address(transport.get_extra_info("peername"))
        if transport.get_extra_info("sslcontext"):
            self.scheme = "https"
            self._tls = tls_scope_extension(transport)
        self._arm_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self.server_state.connections.discard(self)
        self._disarm_head()
        self._disarm_idle()
        exchange = self.exchange
        if exchange is not None:
            if not exchange.response_complete:
                exchange.disconnected = True
            exchange.message_event.set()
        self.resume_writing()
        if exc is None:
            self.transport.close()
        self.parser = None  # type: ignore[assignment]  # it refers back to this protocol

    def eof_received(self) -> None:
        pass  # the transport closes

    def data_received(self, data: bytes) -> None:
        if self._offered is not None:
            self._read_offered_body(data)
            return
        if self._refused:
            self._dropped += len(data)
            if self._dropped > LINGER_BYTES:
                self.transport.close()
            return
        self._disarm_idle()
        if not self._in_head:  # a body: its own limits are RequestLimits'
            self._feed(data, b"")
        elif len(data) <= self.max_header_bytes - self._head_bytes:  # one read, in bounds
            self._head_bytes += len(data)
            self._feed(data, b"")
        else:
            self._feed_bounded(memoryview(data))

    def _feed_bounded(self, rest: memoryview) -> None:
        """A read that may take a head past its bound: fed a bounded piece at a time."""
        while rest and not self._refused and not self.transport.is_closing():
            if self._in_head:
                room = self.max_header_bytes - self._head_bytes
                if room <= 0:
                    self._refuse(f"request head larger than {self.max_header_bytes} bytes")
                    return
                piece = rest[:room]
                self._head_bytes += len(piece)
            else:
                piece = rest
            rest = rest[len(piece) :]
            if not self._feed(piece, rest):  # type: ignore[arg-type]  # httptools reads buffers
                return

    def _feed(self, piece: bytes, rest: bytes) -> bool:
        """Parse ``piece`` (``rest`` follows it in the same read); False when the
        connection reads no further request."""
        try:
            self.parser.feed_data(piece)
        except httptools.HttpParserUpgrade as exc:
            offset = int(exc.args[0]) if exc.args else len(piece)
            self._start_offered_body(bytes(piece[offset:]) + bytes(rest))
            return False
        except httptools.HttpParserError:
            self._send_400("Invalid HTTP request received.")
            return False
        return True

    def pause_writing(self) -> None:
        if not self.write_paused:
            self.write_paused = True
            if self._writable is None:
                self._writable = asyncio.Event()
            self._writable.clear()

    def resume_writing(self) -> None:
        if self.write_paused:
            self.write_paused = False
            if self._writable is not None:
                self._writable.set()

    async def drain(self) -> None:
        if self._writable is not None:
            await self._writable.wait()

    def pause_reading(self) -> None:
        if not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.read_paused:
            self.read_paused = False
            self.transport.resume_reading()

    # --- httptools' callbacks ----------------------------------------------------------

    def on_message_begin(self) -> None:
        self.url = b""
        self.expect_100_continue = False
        self.headers = []
        self.scope = {
            "type": "http",
            "asgi": {"version": self.asgi_version, "spec_version": "2.3"},
            "http_version": "1.1",
            "server": self.server,
            "client": self.client,
            "scheme": self.scheme,
            "root_path": self.root_path,
            "headers": self.headers,
            "state": self.app_state.copy(),
        }
        if self._tls is not None:
            self.scope["extensions"] = {"tls": self._tls}

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._refused:
            return
        self._head_lines += 1
        if self._head_lines > self.max_header_lines:
            self._refuse(f"more than {self.max_header_lines} header lines")
            return
        name = name.lower()
        if name == b"expect" and value.lower() == b"100-continue":
            self.expect_100_continue = True
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        if self._refused:
            return  # the parser finishes its piece; nothing of it is served
        self._in_head = False
        self._head_bytes = self._head_lines = 0
        self._disarm_head()  # a whole head arrived: the request runs (or waits, pipelined)
        parser, scope = self.parser, self.scope
        scope["method"] = parser.get_method().decode("ascii")
        version = parser.get_http_version()
        if version != "1.1":
            scope["http_version"] = version
        url = httptools.parse_url(self.url)
        raw_path = url.path
        path = raw_path.decode("ascii")
        if "%" in path:
            path = unquote(path)
        if self.root_path:
            scope["path"] = self.root_path + path
            scope["raw_path"] = self.root_path.encode("ascii") + raw_path
        else:
            scope["path"] = path
            scope["raw_path"] = raw_path
        scope["query_string"] = url.query or b""
        app = self.app
        limit, state = self.limit_concurrency, self.server_state
        if limit is not None and (len(state.connections) >= limit or len(state.tasks) >= limit):
            app = service_unavailable
            logger.warning("Exceeded concurrency limit.")
        running = self.exchange
        self.exchange = Exchange(
            self,
            scope,
            keep_alive=version != "1.0" and parser.should_keep_alive(),
            expect_100_continue=self.expect_100_continue,
        )
        if running is None or running.response_complete:
            self._start(self.exchange, app)
        else:  # pipelined: it waits for the one before to be answered
            self.pause_reading()
            self.pipeline.appendleft((self.exchange, app))

    def on_body(self, body: bytes) -> None:
        exchange = self.exchange
        if self._refused or exchange is None or exchange.response_complete:
            return
        exchange.body += body
        if len(exchange.body) > HIGH_WATER_LIMIT:
            self.pause_reading()
        exchange.message_event.set()

    def on_message_complete(self) -> None:
        if self._refused:
            return
        self._in_head = True  # what follows is the next request's head
        exchange = self.exchange
        if exchange is None or exchange.response_complete:
            return
        exchange.more_body = False
        exchange.message_event.set()

    # --- answering ---------------------------------------------------------------------

    def _start(self, exchange: Exchange, app: Any) -> None:
        tasks = self.server_state.tasks
        task = self.loop.create_task(exchange.run(app))
        task.add_done_callback(tasks.discard)
        tasks.add(task)

    def on_response_complete(self) -> None:
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._arm_head()  # the next head's deadline (a pipelined one disarms it below)
        self.resume_reading()
        if self.pipeline:
            exchange, app = self.pipeline.pop()
            self._start(exchange, app)
        else:
            self._idle_timer = self.loop.call_later(self.keep_alive_timeout, self._idle_over)

    def default_head(self) -> bytes:
        """The server's own response headers (uvicorn's ``date`` and ``server``, renewed
        every second), as the bytes of their lines."""
        global _joined_head
        headers = self.server_state.default_headers
        if headers is not _joined_head[0]:  # joined once per list (one a second), not per request
            _joined_head = (headers, b"".join(name + b": " + v + b"\r\n" for name, v in headers))
        return _joined_head[1]

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown: close when idle, else after the response."""
        if self.exchange is None or self.exchange.response_complete:
            self.transport.close()
        else:
            self.exchange.keep_alive = False

    def _send_400(self, message: str) -> None:
        logger.warning(message)
        body = message.encode("ascii")
        self.transport.write(
            STATUS_LINES[400]
            + self.default_head()
            + b"content-type: text/plain; charset=utf-8\r\n"
            + b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body)
            + body
        )
        self.transport.close()

    # --- ignored upgrade offers --------------------------------------------------------

    def _start_offered_body(self, rest: bytes) -> None:
        exchange = self.exchange
        if exchange is None or exchange.response_complete:
            return
        exchange.keep_alive = False  # the connection's parser can read no further request
        self._offered = OfferedBody.of(exchange, self.on_body)
        if self._offered is not None:
            self._read_offered_body(rest)

    def _read_offered_body(self, data: bytes) -> None:
        assert self._offered is not None
        if not self._offered.feed(data):
            self._send_400("Invalid HTTP request body.")

    # --- deadlines and refusals --------------------------------------------------------

    def _arm_head(self) -> None:
        self._disarm_head()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _disarm_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _disarm_idle(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    def _idle_over(self) -> None:
        self._idle_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def _client(self) -> str:
        host, port = self.client or ("?", 0)
        return f"{host}:{port}"

    def _head_timed_out(self) -> None:
        self._head_timer = None
        exchange = self.exchange
        busy = exchange is not None and not exchange.response_complete
        if busy or self.transport.is_closing() or self._refused:
            return
        log_refusal(
            "HTTP connection",
            self._client(),
            f"no complete request head within {self.header_timeout:g} s: 408, closed",
        )
        self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()

    def _refuse(self, reason: str) -> None:
        """431, then stop sending, drop what still comes, close after :data:`LINGER`."""
        self._refused = True
        self._disarm_head()
        log_refusal("HTTP connection", self._client(), f"{reason}: 431, closed")
        self.transport.write(_too_large_response(reason))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER, self.transport.close)


def http_protocol(
    header_timeout: float, max_header_bytes: int, max_header_lines: int
) -> type[HttpConnection]:
    """:class:`HttpConnection` with a ``header_timeout`` (seconds) deadline per request
    head and at most ``max_header_bytes`` bytes and ``max_header_lines`` header lines in
    it; pass it as ``uvicorn.Config(http=...)``."""

    class Bounded(HttpConnection):
        pass

    Bounded.header_timeout = header_timeout
    Bounded.max_header_bytes = max_header_bytes
    Bounded.max_header_lines = max_header_lines
    return Bounded
