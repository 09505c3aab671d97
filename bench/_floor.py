"""Python's floor for ``vs_go.py``: the bridge's own recorded stream replayed by a minimal
server. Not a benchmark itself.

:func:`record` reads one 0.3 ``message/stream`` answer from a running bridge and keeps
its SSE frames, byte for byte. Run as a program (``python bench/_floor.py FRAMES``), this
module serves those frames on a free loopback port under uvloop (as ``trpc-bridge serve``
runs): each request read to the end of its body, the response head, then one socket
write per frame, then the connection closed (``Connection: close``, as the bench's
client asks). No routing, no JSON, no task: what a Python server that already had the
bytes would cost. The bridge against it is the distance to what Python can do.
"""

from __future__ import annotations

import asyncio
import pickle
import sys
from pathlib import Path
from urllib.parse import urlsplit

from _rawhttp import complete_request

_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
    b"cache-control: no-store\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n"
)


async def record(url: str, request: bytes) -> list[bytes]:
    """The SSE frames (``data: …\\r\\n\\r\\n``) of the stream ``request`` gets at ``url``."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(request)
    raw = await reader.read()
    writer.close()
    _, _, body = raw.partition(b"\r\n\r\n")
    data = bytearray()
    while body:  # de-chunk
        size, _, rest = body.partition(b"\r\n")
        length = int(size, 16)
        if length == 0:
            break
        data += rest[:length]
        body = rest[length + 2 :]
    return [frame + b"\r\n\r\n" for frame in bytes(data).split(b"\r\n\r\n") if frame]


class _Replay(asyncio.Protocol):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.buffer = b""
        self.transport: asyncio.WriteTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no asyncio.Transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if complete_request(self.buffer) is None:
            return
        assert self.transport is not None
        self.transport.write(_HEAD)
        for chunk in self.chunks:  # one write per frame, as a server that streams does
            self.transport.write(chunk)
        self.transport.write(b"0\r\n\r\n")
        self.transport.close()


async def _serve(frames: list[bytes]) -> None:
    chunks = [b"%x\r\n%s\r\n" % (len(frame), frame) for frame in frames]
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Replay(chunks), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    print(f"READY http://127.0.0.1:{port}/", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    frames = pickle.loads(Path(sys.argv[1]).read_bytes())
    try:
        import uvloop

        uvloop.run(_serve(frames))
    except ImportError:
        asyncio.run(_serve(frames))


if __name__ == "__main__":
    main()
