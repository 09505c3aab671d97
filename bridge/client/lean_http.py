"""A small HTTP/1.1 client for the proxy's pass-through: one ``POST`` at a time per
connection, its answer read as Server-Sent Events or whole, connections kept alive.

Why not httpx here: a proxied stream pays httpx's and h11's Python code for every chunk
and ``aiter_lines`` for every line, about three quarters of the cost of reading a frame
(``bench/vs_go.py``, ``proxy``). This client parses the response with httptools (C, the
parser uvicorn serves with) on an asyncio protocol and hands over the body as it arrives,
for :class:`~trpc_bridge.client.sse.SseParser` to split into events.

It speaks only what the pass-through needs: ``http`` and ``https`` (certificates always
verified, against the caller's CAs when given), no proxies (a caller that has an HTTP
proxy configured for the upstream keeps httpx: :func:`direct`), no redirects. Failures
raise :class:`LeanHttpError` with words for the caller, as :func:`~trpc_bridge.client.
errors.failure_text` words httpx's.
"""

from __future__ import annotations

import asyncio
import ssl
import urllib.request
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from time import perf_counter
from typing import cast
from urllib.parse import urlsplit

import httptools

#: Buffered body bytes above which the connection stops reading until the consumer
#: catches up (the upstream is then held back by TCP, as it is by httpx).
_HIGH_WATER = 1 << 20
#: An answer left unread (its consumer stopped after the frame it wanted) is read to its
#: end for the connection to be reused, for at most this long and this many bytes.
_DRAIN_SECONDS = 1.0
_DRAIN_BYTES = 1 << 20


class LeanHttpError(Exception):
    """A request that failed; ``str()`` is the caller's sentence."""


def direct(url: str) -> bool:
    """``url`` is reached without a proxy (no ``HTTP(S)_PROXY`` applies to it), as httpx
    would reach it with its default ``trust_env``."""
    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return True
    return bool(urllib.request.proxy_bypass(parts.hostname or ""))


def _header_bytes(headers: Mapping[str, str]) -> bytes:
    lines = []
    for name, value in headers.items():
        if (
            not name.isascii()
            or not value.isascii()
            or "\r" in value
            or "\n" in value
            or "\0" in value
        ):
            raise LeanHttpError(f"the request header {name!r} cannot be sent")
        lines.append(f"{name}: {value}\r\n")
    return "".join(lines).encode("ascii")


def _time_out(wake: asyncio.Future[None]) -> None:
    if not wake.done():
        wake.set_exception(LeanHttpError("timed out"))


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection and the response being read on it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.lost = False
        self._parser = httptools.HttpResponseParser(self)
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._paused = False
        self._wake: asyncio.Future[None] | None = None
        self.status = 0
        self.headers: dict[str, str] = {}
        self.headers_done = False
        self.keep_alive = False
        self.complete = False
        self.error: str | None = None
        #: Where the connection goes once an answer nobody reads has ended.
        self._drained: Callable[[_Connection], None] | None = None
        self._drain_timer: asyncio.TimerHandle | None = None
        self._discarded = 0
        #: Loop time it went back to the pool (``LeanHttp._pool``).
        self.idle_since = 0.0

    # --- asyncio.Protocol -----------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, but have its methods.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            self.error = "the answer is not HTTP"
            self._close()
        self._notify()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if not self.complete and self.error is None:
            self.error = "the connection closed before the answer was complete"
        self._notify()

    def eof_received(self) -> bool | None:
        return None  # the transport closes itself

    # --- httptools callbacks --------------------------------------------------------

    def on_status(self, status: bytes) -> None:
        self.status = self._parser.get_status_code()

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self.headers_done = True
        # Asked here: once the message is complete the parser has moved on.
        self.keep_alive = self._parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        if self._drained is not None:
            self._discarded += len(body)
            if self._discarded > _DRAIN_BYTES:
                self._close()
            return
        self._chunks.append(body)
        self._buffered += len(body)
        if self._buffered > _HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()

    def on_message_complete(self) -> None:
        self.complete = True
        drained, self._drained = self._drained, None
        if drained is not None:
            if self._drain_timer is not None:
                self._drain_timer.cancel()
            drained(self)

    # --- the reading side -----------------------------------------------------------

    def _notify(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def wait(self, timeout: float | None) -> None:
        """Until something happened on the connection (bytes, end, loss);
        :class:`LeanHttpError` after ``timeout`` seconds of nothing. One timer per wait
        rather than an ``asyncio.timeout`` scope: a stream waits once per read."""
        loop = asyncio.get_running_loop()
        wake = self._wake = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _time_out, wake)
        try:
            await wake
        finally:
            self._wake = None
            if timer is not None:
                timer.cancel()

    def take(self) -> list[bytes]:
        """The body bytes received so far."""
        chunks = list(self._chunks)
        self._chunks.clear()
        self._buffered = 0
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return chunks

    def reusable(self) -> bool:
        return self.complete and not self.lost and self.error is None and self.keep_alive

    def discard(self, done: Callable[[_Connection], None]) -> None:
        """Nobody reads the rest of this answer: read it to its end and hand the
        connection to ``done`` (closed instead when that takes too long or too much)."""
        self.take()
        if self.complete or self.lost or self.error is not None:
            done(self)
            return
        self._drained, self._discarded = done, 0
        self._drain_timer = asyncio.get_running_loop().call_later(_DRAIN_SECONDS, self._close)

    def reset(self) -> None:
        """Ready for the next request on this connection."""
        self._parser = httptools.HttpResponseParser(self)
        self.status, self.headers, self.headers_done, self.complete = 0, {}, False, False
        self._chunks.clear()
        self._buffered = 0

    def _close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class LeanResponse:
    """The answer to one request: status and headers are read; the body is read with
    :meth:`chunks` or :meth:`read`. :meth:`release` when done (``async with``)."""

    def __init__(self, client: LeanHttp, connection: _Connection, idle: float | None) -> None:
        self._client = client
        self._connection = connection
        self._idle = idle
        self.status = connection.status
        self.headers = connection.headers

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives (whatever was received since the last one, at once)."""
        connection = self._connection
        while True:
            chunks = connection.take()
            if chunks:  # more may arrive while they are consumed: look again after
                # One piece per read, not per HTTP chunk (Go writes one per event).
                yield chunks[0] if len(chunks) == 1 else b"".join(chunks)
                continue
            if connection.complete:
                return
            if connection.error is not None:
                raise LeanHttpError(connection.error)
            await connection.wait(self._idle)

    @property
    def ended(self) -> bool:
        """Every byte of the answer was received and taken: no read would wait."""
        return self._connection.complete and not self._connection._chunks

    async def read(self) -> bytes:
        return b"".join([chunk async for chunk in self.chunks()])

    def release(self) -> None:
        """The connection goes back to the pool when its answer was read to the end,
        and is closed otherwise."""
        self._client.give_back(self._connection)

    def abort(self) -> None:
        """Close the connection: the answer is no longer wanted, and the server may see
        its caller go (nothing is read to its end)."""
        self._connection._close()

    async def __aenter__(self) -> LeanResponse:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()


class Sent:
    """A request written on a kept-alive connection, its answer not read yet
    (:meth:`LeanHttp.send_pooled`)."""

    __slots__ = ("at", "connection")

    def __init__(self, connection: _Connection) -> None:
        self.connection = connection
        #: When it was written (``time.perf_counter``): a metered run's start.
        self.at = perf_counter()

    def abort(self) -> None:
        """The answer is not wanted: the connection closes (the server sees its caller
        go, as when a request in progress is given up)."""
        self.connection._close()


#: Seconds a kept-alive connection may sit in the pool and still be reused. Servers close
#: theirs after about 5 s idle (uvicorn's and Node.js's defaults); a request written while
#: the server closes its end is lost ("the connection closed before the answer was
#: complete"), so a connection is retired before that.
KEEPALIVE_EXPIRY = 4.0


class LeanHttp:
    """POSTs to one origin (``scheme://host:port``) over kept-alive connections."""

    def __init__(
        self,
        url: str,
        *,
        connect_timeout: float | None = 10.0,
        idle_timeout: float | None = None,
        ssl_context: ssl.SSLContext | None = None,
        keepalive_expiry: float = KEEPALIVE_EXPIRY,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url}")
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self._authority = parts.netloc.rpartition("@")[2]
        secure = parts.scheme == "https"
        self._ssl = (ssl_context or ssl.create_default_context()) if secure else None
        self._connect_timeout = connect_timeout
        self._idle_timeout = idle_timeout
        self._keepalive_expiry = keepalive_expiry
        self._idle: list[_Connection] = []
        self._closed = False

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self._connect_timeout):
                _, connection = await loop.create_connection(
                    _Connection,
                    self.host,
                    self.port,
                    ssl=self._ssl,
                    server_hostname=self.host if self._ssl else None,
                )
        except TimeoutError:
            raise LeanHttpError("timed out") from None
        except ssl.SSLError as exc:
            raise LeanHttpError(f"TLS failed ({exc.reason or type(exc).__name__})") from None
        except OSError:
            raise LeanHttpError("cannot connect") from None
        return connection

    def _pooled(self) -> _Connection | None:
        if not self._idle:
            return None
        oldest = asyncio.get_running_loop().time() - self._keepalive_expiry
        while self._idle:
            connection = self._idle.pop()  # the most recently used first
            if connection.lost:
                continue
            if connection.idle_since < oldest:  # the rest idled longer still
                connection._close()
                for stale in self._idle:
                    stale._close()
                self._idle.clear()
                return None
            connection.reset()
            return connection
        return None

    def _request(self, path: str, body: bytes, headers: Mapping[str, str]) -> bytes:
        head = (
            f"POST {path or '/'} HTTP/1.1\r\nHost: {self._authority}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        ).encode("ascii")
        return head + _header_bytes(headers) + b"\r\n" + body

    async def post(self, path: str, body: bytes, headers: Mapping[str, str]) -> LeanResponse:
        """Send ``POST path`` with a JSON ``body`` and ``headers``; the response once its
        head is read. Raises :class:`LeanHttpError`."""
        request = self._request(path, body, headers)
        connection = self._pooled()
        if connection is None:
            connection = await self._connect()
        assert connection.transport is not None
        connection.transport.write(request)
        return await self._response(connection)

    def send_pooled(self, path: str, body: bytes, headers: Mapping[str, str]) -> Sent | None:
        """:meth:`post`'s request written now, without an await, on a kept-alive
        connection; :meth:`response_to` reads its answer. None (nothing sent) when no
        connection is kept alive: opening one takes an await. Raises
        :class:`LeanHttpError` as :meth:`post`."""
        request = self._request(path, body, headers)
        connection = self._pooled()
        if connection is None:
            return None
        assert connection.transport is not None
        connection.transport.write(request)
        return Sent(connection)

    async def response_to(self, sent: Sent) -> LeanResponse:
        """The response to a request :meth:`send_pooled` wrote, as :meth:`post` returns it."""
        return await self._response(sent.connection)

    async def _response(self, connection: _Connection) -> LeanResponse:
        """The response to the request written on ``connection``, once its head is read
        (closing the connection when that fails or is given up)."""
        try:
            while not connection.headers_done:
                if connection.error is not None:
                    raise LeanHttpError(connection.error)
                await connection.wait(self._idle_timeout)
        except BaseException:
            connection._close()
            raise
        return LeanResponse(self, connection, self._idle_timeout)

    def give_back(self, connection: _Connection) -> None:
        """A connection whose answer was read (or is being read to its end, unread)."""
        if not connection.complete and not self._closed:
            connection.discard(self._pool)
        else:
            self._pool(connection)

    def _pool(self, connection: _Connection) -> None:
        if connection.reusable() and not self._closed:
            connection.idle_since = asyncio.get_running_loop().time()
            self._idle.append(connection)
        else:
            connection._close()

    async def aclose(self) -> None:
        self._closed = True
        for connection in self._idle:
            connection._close()
        self._idle.clear()
