"""A small answer leaves the server in one TCP segment, head and body together
(``server/http/one_write.py``); a stream's head still comes before its first frame, and
the bytes are those uvicorn writes.

Segments are counted by the kernel (``TCP_INFO``'s ``tcpi_data_segs_in`` on the client's
socket, Linux only): on loopback one write of a few KB is one segment, two writes are
two (the server sets ``TCP_NODELAY``).
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import sys

import pytest

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer, ServerOptions

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
