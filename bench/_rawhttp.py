"""Shared by ``vs_go.py``: an HTTP client that costs almost nothing per SSE frame, and an
OTLP/HTTP sink that accepts spans and forgets them. Not a benchmark itself.

The client is an ``asyncio.Protocol`` on a fresh connection per request
(``Connection: close``, so the response ends at EOF and neither chunked framing nor
SSE lines need parsing): per TCP read it only counts ``\\ndata:`` (one per SSE frame, on
both servers) and notes when the first one arrived. Reading a 10k-frame stream costs it
a few milliseconds, so the measured server is never waiting for the reader; the same
client reads both servers.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

_DATA = b"\ndata:"
_KEEP = 4096


@dataclass
class Exchange:
    """One request/response as the client saw it."""

    #: From the connect to EOF.
    seconds: float
    #: From the connect to the first SSE frame (to the first byte when there is none).
    first_event: float
    #: SSE frames (``data:`` lines) in the response.
    frames: int
    #: The first and the last bytes of the response, to check how it ended.
    head: bytes
    tail: bytes


class _Reader(asyncio.Protocol):
    def __init__(self, request: bytes, done: asyncio.Future[Exchange]) -> None:
        self.request = request
        self.done = done
        self.start = time.perf_counter()
        self.first = 0.0
        self.frames = 0
        self.head = b""
        self.tail = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        # A frame marker split across two reads is found in the last 5 bytes + the new data.
        found = (self.tail[-5:] + data).count(_DATA)
        if found and not self.frames:
            self.first = time.perf_counter()
        self.frames += found
        if len(self.head) < _KEEP:
            self.head += data[: _KEEP - len(self.head)]
        self.tail = (self.tail + data)[-_KEEP:] if len(data) < _KEEP else data[-_KEEP:]

    def connection_lost(self, exc: Exception | None) -> None:
        end = time.perf_counter()
        if exc is not None:
            self.done.set_exception(exc)
            return
        first = (self.first or end) - self.start
        self.done.set_result(Exchange(end - self.start, first, self.frames, self.head, self.tail))


def request_bytes(url: str, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    """A JSON POST to ``url`` that asks the server to close the connection after it."""
    parts = urlsplit(url)
    lines = [
        f"POST {parts.path or '/'} HTTP/1.1",
        f"Host: {parts.netloc}",
        "Content-Type: application/json",
        "Accept: text/event-stream, application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
        *(f"{name}: {value}" for name, value in (headers or {}).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def exchange(url: str, request: bytes) -> Exchange:
    """Send ``request`` (from :func:`request_bytes`) to ``url``'s host; read to EOF."""
    parts = urlsplit(url)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Exchange] = loop.create_future()
    host = parts.hostname or "127.0.0.1"
    await loop.create_connection(lambda: _Reader(request, done), host, parts.port or 80)
    return await done


def complete_request(buffer: bytes) -> tuple[int, int] | None:
    """The size of the whole HTTP/1.1 request at the start of ``buffer`` and its body's
    length (``Content-Length``; none = 0), or ``None`` while it is not all there."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return None
    length = 0
    for line in buffer[:end].split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    size = end + 4 + length
    return None if len(buffer) < size else (size, length)


class _SinkProtocol(asyncio.Protocol):
    """HTTP/1.1 keep-alive: each ``Content-Length`` request gets an empty 200."""

    def __init__(self, sink: OtlpSink) -> None:
        self.sink = sink
        self.buffer = b""
        self.transport: asyncio.WriteTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.WriteTransport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (request := complete_request(self.buffer)) is not None:
            size, length = request
            self.sink.exports += 1
            self.sink.bytes += length
            self.buffer = self.buffer[size:]
            assert self.transport is not None
            self.transport.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n"
                b"Content-Length: 0\r\n\r\n"
            )


class OtlpSink:
    """An OTLP/HTTP collector on loopback that accepts every export and keeps nothing
    but counts; ``endpoint`` is what ``OTEL_EXPORTER_OTLP_ENDPOINT`` should say."""

    def __init__(self) -> None:
        self.exports = 0
        self.bytes = 0
        self._server: asyncio.Server | None = None
        self.endpoint = ""

    async def __aenter__(self) -> OtlpSink:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _SinkProtocol(self), "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.close()


if __name__ == "__main__":
    print("bench/_rawhttp.py: helpers for bench/vs_go.py (nothing to measure)")
