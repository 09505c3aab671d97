"""Request timeouts and the connection cap: connections that send half a request head or
half a body are answered 408 and closed once their deadline passes (not extended by
trickling bytes), idle keep-alive connections are closed, and past the cap requests get
503 — while a normal caller is served throughout."""

from __future__ import annotations

import asyncio
import time

import httpx

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer, Limits, ServerOptions

from .helpers import go_message, jsonrpc, sse_results

TIMEOUT = 1.0
HALF_HEAD = b"POST / HTTP/1.1\r\nHost: bridge\r\nContent-Type: applic"
HALF_BODY = (
    b"POST / HTTP/1.1\r\nHost: bridge\r\nContent-Type: application/json\r\n"
    b"Content-Length: 1000\r\n\r\n" + b'{"jsonrpc": "2.0", "id": 1, '
)


async def _slow_client(port: int, request: bytes) -> tuple[bytes, float]:
    """Send ``request`` and nothing more; what the server answered before it closed the
    connection, and after how many seconds (counted from before connecting: the server's
    deadline starts when it accepts, which a busy client may only see later)."""
    started = time.monotonic()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), TIMEOUT + 30)  # until EOF
    writer.close()
    return answer, time.monotonic() - started


async def _normal_call(server: BridgeServer) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        unary = await http.post(
            server.jsonrpc_url,
            json=jsonrpc("message/send", {"message": go_message("weather in Paris")}),
        )
        assert unary.json()["result"]["kind"] == "task"
        body = jsonrpc("message/stream", {"message": go_message("weather in Oslo")})
        async with http.stream("POST", server.jsonrpc_url, json=body) as stream:
            frames = [frame async for frame in sse_results(stream)]
        assert frames[-1]["status"]["state"] == "completed"


async def test_slowloris_connections_are_closed_while_others_are_served() -> None:
    options = ServerOptions(
        grpc_port=None, limits=Limits(header_timeout=TIMEOUT, body_timeout=TIMEOUT)
    )
    async with BridgeServer(demo_agent(), options) as server:
        slow = [
            asyncio.create_task(_slow_client(server.http_port, HALF_HEAD if i % 2 else HALF_BODY))
            for i in range(300)
        ]
        await asyncio.sleep(0.2)  # all connected and waiting
        for _ in range(3):
            await _normal_call(server)
        answers = await asyncio.gather(*slow)
    heads = [answer for i, (answer, _) in enumerate(answers) if i % 2]
    bodies = [answer for i, (answer, _) in enumerate(answers) if not i % 2]
    assert all(a.startswith(b"HTTP/1.1 408 Request Timeout\r\n") for a in heads)
    assert all(
        a.startswith(b"HTTP/1.1 408 ") and b"request body not received within 1 s" in a
        for a in bodies
    )
    # Closed by their deadline, not at once (generous upper bound: a shared 2-core box).
    assert min(elapsed for _, elapsed in answers) >= TIMEOUT * 0.9


async def test_a_trickling_head_does_not_extend_its_deadline() -> None:
    # A head trickled a byte every 50 ms for up to 30 s: the server must close it at its
    # deadline, long before the last byte, since trickled bytes do not extend it.
    trickle = b"POST / HTTP/1.1\r\nHost: bridge\r\nX-Slow: " + b"x" * 600
    options = ServerOptions(grpc_port=None, limits=Limits(header_timeout=TIMEOUT))
    async with BridgeServer(demo_agent(), options) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.http_port)
        closed = asyncio.create_task(reader.read())
        sent = 0
        try:
            for byte in trickle:
                if closed.done():
                    break
                writer.write(bytes([byte]))
                await writer.drain()
                sent += 1
                await asyncio.sleep(0.05)
        except ConnectionError:
            pass  # closed while we were still writing
        try:
            answer = await asyncio.wait_for(closed, 30)
        except ConnectionError:
            answer = b"reset"  # our last bytes crossed the close: the kernel resets
        writer.close()
    assert answer.startswith(b"HTTP/1.1 408 ") or answer == b"reset"
    assert sent < len(trickle)  # closed by the server mid-trickle, not by our last byte


async def test_idle_keep_alive_connections_are_closed() -> None:
    options = ServerOptions(grpc_port=None, limits=Limits(keep_alive=1))
    async with BridgeServer(demo_agent(), options) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.http_port)
        writer.write(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: bridge\r\n\r\n")
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 30)  # the answer, then EOF
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")


async def test_past_the_connection_cap_requests_get_503() -> None:
    options = ServerOptions(grpc_port=None, limits=Limits(max_connections=4))
    async with BridgeServer(demo_agent(), options) as server:
        held = [await asyncio.open_connection("127.0.0.1", server.http_port) for _ in range(4)]
        async with httpx.AsyncClient(timeout=30) as http:
            refused = await http.get(server.card_url)
        for _, writer in held:
            writer.close()
        await asyncio.sleep(0.2)
        async with httpx.AsyncClient(timeout=30) as http:
            served = await http.get(server.card_url)
    assert refused.status_code == 503
    assert served.status_code == 200
