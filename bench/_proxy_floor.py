"""Python's floor for ``vs_go.py``'s ``proxy`` configuration: the least a Python proxy in
front of the Go server can do. Not a benchmark itself.

Run as a program (``python bench/_proxy_floor.py UPSTREAM_URL``), it serves on a free
loopback port under uvloop (as ``trpc-bridge proxy`` runs): each request read to the end
of its body and written to the upstream on a kept-alive connection from a pool (as the
bridge's lean client does), its ``Connection: close`` asked as ``keep-alive`` there; the
upstream's answer relayed to the caller as it arrives, byte for byte, until httptools says
the answer is complete; then the caller's connection closed and the upstream's pooled
again. No routing, no JSON, no task, no ids rewritten: what a Python proxy that changed
nothing would cost. The bridge's proxy against it is the distance to what Python can do
in that seat.
"""

from __future__ import annotations

import asyncio
import sys
from urllib.parse import urlsplit

import httptools
from _rawhttp import complete_request

_CLOSE = b"\r\nConnection: close\r\n"
_KEEP = b"\r\nConnection: keep-alive\r\n"


class _Upstream(asyncio.Protocol):
    """One kept-alive connection to the upstream; relays one answer at a time."""

    def __init__(self, pool: list[_Upstream]) -> None:
        self.pool = pool
        self.caller: asyncio.WriteTransport | None = None
        self.transport: asyncio.WriteTransport | None = None
        self.parser = httptools.HttpResponseParser(self)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no asyncio.Transport

    def send(self, caller: asyncio.WriteTransport, request: bytes) -> None:
        assert self.transport is not None
        self.caller = caller
        self.transport.write(request)

    def data_received(self, data: bytes) -> None:
        assert self.caller is not None
        self.caller.write(data)
        self.parser.feed_data(data)

    def on_message_complete(self) -> None:  # httptools: the answer is all there
        assert self.caller is not None
        self.caller.close()
        self.caller = None
        self.pool.append(self)

    def connection_lost(self, exc: Exception | None) -> None:
        if self in self.pool:
            self.pool.remove(self)
        if self.caller is not None:
            self.caller.close()


class _Caller(asyncio.Protocol):
    def __init__(self, upstream: tuple[str, int], pool: list[_Upstream]) -> None:
        self.upstream = upstream
        self.pool = pool
        self.buffer = b""
        self.transport: asyncio.WriteTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if complete_request(self.buffer) is None:
            return
        request, self.buffer = self.buffer.replace(_CLOSE, _KEEP, 1), b""
        if self.pool:
            assert self.transport is not None
            self.pool.pop().send(self.transport, request)
        else:
            asyncio.get_running_loop().create_task(self._connect(request))

    async def _connect(self, request: bytes) -> None:
        loop = asyncio.get_running_loop()
        _, upstream = await loop.create_connection(lambda: _Upstream(self.pool), *self.upstream)
        assert self.transport is not None
        upstream.send(self.transport, request)


async def _serve(url: str) -> None:
    parts = urlsplit(url)
    address = (parts.hostname or "127.0.0.1", parts.port or 80)
    pool: list[_Upstream] = []
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Caller(address, pool), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(f"READY http://127.0.0.1:{port}/", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    try:
        import uvloop

        uvloop.run(_serve(sys.argv[1]))
    except ImportError:
        asyncio.run(_serve(sys.argv[1]))


if __name__ == "__main__":
    main()
