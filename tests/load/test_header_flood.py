"""Request heads too large to serve, from many raw sockets at once, against one
``trpc-bridge serve`` process: each gets HTTP 431 (or, having sent far more than the
server reads, a reset), the server's resident memory stays bounded (reported), and a
normal caller is served during and after the flood."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from server_process import ServerProcess, served

#: Connections flooding at once, and what each sends (well past the 64 KiB default).
FLOODS = 100
HEAD_BYTES = 2 * 1024 * 1024
CHUNK = 64 * 1024
#: Resident memory the flood may add to the server (the unbounded server grew by about
#: 37 MB per 20 MB header, and never gave it back).
RSS_GROWTH_MIB = 64


@pytest.fixture
async def server() -> AsyncIterator[ServerProcess]:
    async with served("demo", "--max-connections", "1000") as process:
        yield process


async def _flood(port: int, head: bytes) -> bytes:
    """Send ``head`` (never complete) in chunks; what came back before the close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for start in range(0, len(head), CHUNK):
            writer.write(head[start : start + CHUNK])
            await writer.drain()
    except ConnectionError:
        pass  # closed by the server while we were still sending
    try:
        answer = await asyncio.wait_for(reader.read(), 60)
    except ConnectionError:
        answer = b"reset"
    writer.close()
    return answer


async def _card(url: str) -> int:
    async with httpx.AsyncClient(timeout=30) as http:
        return (await http.get(f"{url}/.well-known/agent-card.json")).status_code


async def test_header_floods_get_431_in_bounded_memory(
    server: ServerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    one_line = b"GET / HTTP/1.1\r\nHost: bridge\r\nX-Flood: " + b"a" * HEAD_BYTES
    many_lines = b"GET / HTTP/1.1\r\nHost: bridge\r\n" + b"X-Flood: a\r\n" * (HEAD_BYTES // 12)
    long_url = b"GET /" + b"a" * HEAD_BYTES
    heads = [one_line, many_lines, long_url]
    assert await _card(server.url) == 200
    before = server.rss_kib()
    floods = [asyncio.create_task(_flood(port, heads[i % 3])) for i in range(FLOODS)]
    during = await _card(server.url)
    answers = await asyncio.gather(*floods)
    after = server.rss_kib()
    refused = sum(a.startswith(b"HTTP/1.1 431 Request Header Fields Too Large") for a in answers)
    with capsys.disabled():
        print(
            f"\n{FLOODS} connections sending {HEAD_BYTES // 1024} KiB request heads at once: "
            f"{refused} answered 431, {FLOODS - refused} reset after it; server RSS "
            f"{before // 1024} MiB before, {after // 1024} MiB after"
        )
    assert all(a.startswith(b"HTTP/1.1 431 ") or a == b"reset" for a in answers), answers[:3]
    assert refused > 0
    assert (after - before) // 1024 < RSS_GROWTH_MIB
    assert during == 200
    assert await _card(server.url) == 200
