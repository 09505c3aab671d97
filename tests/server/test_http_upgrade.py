"""A request that offers another protocol (``Upgrade: h2c``, as the JDK's HTTP client does
on every plain-HTTP request) is served in HTTP/1.1 with its whole body, whatever its
framing and however its bytes arrive; the connection closes after the answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from trpc_bridge.agents.loader import load_agent
from trpc_bridge.server import BridgeServer, ServerOptions

BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "message/send",
        "params": {
            "message": {
                "role": "user",
                "messageId": "m-1",
                "parts": [{"kind": "text", "text": "héllo"}],
            }
        },
    }
).encode()
OFFER = (
    b"Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
    b"HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n"
)


@pytest.fixture
async def port() -> AsyncIterator[int]:
    async with BridgeServer(load_agent("demo"), ServerOptions(grpc_port=None)) as server:
        yield server.http_port


async def exchange(port: int, pieces: list[bytes]) -> tuple[bytes, bytes]:
    """Send ``pieces`` one by one (a pause between them), read until the server closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0.02)
        answer = await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return head, body


def chunked(body: bytes, size: int) -> bytes:
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


def answered(head: bytes, body: bytes) -> None:
    assert head.startswith(b"HTTP/1.1 200"), head
    assert b"connection: close" in head.lower()
    reply = json.loads(body)
    assert reply["id"] == 7 and "result" in reply, reply


@pytest.mark.parametrize("split", [0, 1, 40, len(BODY) - 1])
async def test_a_content_length_body_after_an_upgrade_offer_is_read(port: int, split: int) -> None:
    head = (
        b"POST / HTTP/1.1\r\nHost: t\r\n"
        + OFFER
        + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY)
    )
    answered(*await exchange(port, [head + BODY[:split], BODY[split:]]))


async def test_a_chunked_body_after_an_upgrade_offer_is_read(port: int) -> None:
    head = (
        b"POST / HTTP/1.1\r\nHost: t\r\n"
        + OFFER
        + b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    body = chunked(BODY, 17)
    answered(*await exchange(port, [head + body[:30], body[30:]]))


async def test_a_bodyless_request_with_an_offer_is_answered_and_closed(port: int) -> None:
    head, body = await exchange(
        port, [b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: t\r\n" + OFFER + b"\r\n"]
    )
    assert head.startswith(b"HTTP/1.1 200") and b"connection: close" in head.lower()
    assert json.loads(body)["name"]


async def test_a_broken_chunked_body_after_an_offer_is_a_400(port: int) -> None:
    head = b"POST / HTTP/1.1\r\nHost: t\r\n" + OFFER + b"Transfer-Encoding: chunked\r\n\r\n"
    status, _ = await exchange(port, [head + b"zz\r\nnot hex\r\n"])
    assert status.startswith(b"HTTP/1.1 400"), status
