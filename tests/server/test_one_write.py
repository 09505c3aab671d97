"""What a response writes in one turn of the event loop leaves the server as one TCP
segment (``server/http/one_write.py``): a small answer's head and body, a stream's last
frames and the end of its chunked body; the bytes are those uvicorn writes.

Segments are counted by the kernel (``TCP_INFO``'s ``tcpi_data_segs_in`` on the client's
socket, Linux only): on loopback one write of a few KB is one segment, two writes are
two (the server sets ``TCP_NODELAY``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
import sys
from collections.abc import AsyncIterator

import pytest

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.http.one_write import TurnWrites

from .helpers import go_message, jsonrpc

#: Offset of ``tcpi_data_segs_in`` (u32) in Linux's ``struct tcp_info``.
_DATA_SEGS_IN = 152

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="TCP_INFO's segment counts are Linux's"
)


def _request(port: int, body: bytes) -> bytes:
    return (
        f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def _complete(answer: bytes) -> bool:
    """A whole answer with a ``Content-Length``, or a stream up to its last status."""
    head, sep, content = answer.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.lower().split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return len(content) >= int(line.split(b":")[1])
    return b'"completed"' in content


async def _exchange(port: int, body: bytes) -> tuple[bytes, int]:
    """The answer to ``body`` (keep-alive: the server does not close the connection), and
    the data segments it came in."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(_request(port, body))
        answer = b""
        while not _complete(answer):
            chunk = await asyncio.wait_for(reader.read(65536), 30)
            assert chunk, answer
            answer += chunk
        sock = writer.get_extra_info("socket")
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
        (segments,) = struct.unpack_from("I", info, _DATA_SEGS_IN)
        return answer, segments
    finally:
        writer.close()


async def _call(method: str, text: str) -> tuple[bytes, bytes, int]:
    """A served demo agent asked ``text`` with ``method``: the answer's head and content,
    and the data segments the answer came in."""
    async with BridgeServer(demo_agent(), ServerOptions(grpc_port=None)) as server:
        body = json.dumps(jsonrpc(method, {"message": go_message(text)}))
        answer, segments = await _exchange(server.http_port, body.encode())
    head, _, content = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    return head, content, segments


async def test_a_unary_answer_is_one_segment() -> None:
    _, content, segments = await _call("message/send", "weather in Paris")
    assert json.loads(content)["result"]["kind"] == "task"
    assert segments == 1


async def test_a_streams_head_and_frames_all_arrive() -> None:
    head, frames, _ = await _call("message/stream", "weather in Oslo")
    assert b"text/event-stream" in head
    assert frames.count(b"data: ") >= 2


def _segments_in(sock: socket.socket) -> int:
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    (segments,) = struct.unpack_from("I", info, _DATA_SEGS_IN)
    return int(segments)


@contextlib.asynccontextmanager
async def _loopback() -> AsyncIterator[tuple[TurnWrites, asyncio.StreamReader, socket.socket]]:
    """A :class:`TurnWrites` on the server end of a real loopback connection (no Nagle, as
    the server sets), the client's reader and its socket."""
    accepted: asyncio.Future[asyncio.Transport] = asyncio.get_running_loop().create_future()

    class Server(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            assert isinstance(transport, asyncio.Transport)
            transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            accepted.set_result(transport)

    loop = asyncio.get_running_loop()
    server = await loop.create_server(Server, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        yield TurnWrites(await accepted, loop), reader, writer.get_extra_info("socket")
    finally:
        writer.close()
        server.close()


async def test_writes_of_one_turn_are_one_segment_and_turns_are_not_merged() -> None:
    """The transport wrapper on a real loopback connection: three writes in one turn
    arrive as one segment, in order; a write of a later turn is a segment of its own."""
    async with _loopback() as (writes, reader, client):
        writes.write(b"head ")
        writes.write(b"frames ")
        writes.write(b"end")
        assert await reader.readexactly(15) == b"head frames end"
        assert _segments_in(client) == 1
        writes.write(b"next")
        assert await reader.readexactly(4) == b"next"
        assert _segments_in(client) == 2
        writes.write(b"last")
        writes.close()  # what is held leaves before the close
        assert await reader.read() == b"last"


async def test_a_flush_waits_once_for_its_writer_woken_again() -> None:
    """A writer woken again before its write leaves (what it awaited is done, as a stream's
    writer is when its run publishes more) writes its next bytes into the same segment;
    a writer still waiting does not hold the write back."""
    loop = asyncio.get_running_loop()
    async with _loopback() as (writes, reader, client):
        more: asyncio.Future[None] = loop.create_future()
        done: asyncio.Future[None] = loop.create_future()

        async def stream() -> None:
            writes.write(b"frames ")  # its flush is queued now
            await more  # woken below, before that flush runs
            writes.write(b"last frames")
            await done

        task = asyncio.create_task(stream())
        await asyncio.sleep(0)  # the stream writes and waits
        more.set_result(None)
        assert await reader.readexactly(18) == b"frames last frames"
        assert _segments_in(client) == 1
        writes.write(b"alone")  # this task waits for the reader: nothing holds it back
        assert await reader.readexactly(5) == b"alone"
        assert _segments_in(client) == 2
        done.set_result(None)
        await task
