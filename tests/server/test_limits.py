"""Request timeouts and the connection cap: connections that send half a request head or
half a body are answered 408 and closed once their deadline passes (not extended by
trickling bytes), idle keep-alive connections are closed, and past the cap requests get
503 — while a normal caller is served throughout."""

from __future__ import annotations

import asyncio
import time

import httpx
from starlette.types import Receive, Scope, Send

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer, Limits, ServerOptions
from trpc_bridge.server.http.limits import _buffered
from trpc_bridge.server.http.listener import HttpListener

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


async def _send_head(port: int, head: bytes) -> bytes:
    """Send ``head`` on a raw socket; everything the server answered before it closed."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 30)  # until EOF
    writer.close()
    return answer


_TOO_LARGE = b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
_CARD = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: bridge\r\n"


async def test_request_heads_over_the_size_or_line_bound_get_431_and_are_closed() -> None:
    limits = Limits(max_header_bytes=8 * 1024, max_header_lines=20)
    options = ServerOptions(limits=limits, grpc_port=None)
    async with BridgeServer(demo_agent(), options) as server:
        port = server.http_port
        one_line = await _send_head(port, _CARD + b"X-Big: " + b"a" * 9000 + b"\r\n\r\n")
        long_url = await _send_head(port, b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n")
        lines = b"".join(b"X-%d: y\r\n" % i for i in range(20))
        many_lines = await _send_head(port, _CARD + lines + b"\r\n")
        # Within both bounds (with Host and Connection, 20 lines; about 7 KiB): served.
        under = _CARD + b"".join(b"X-%d: %s\r\n" % (i, b"y" * 380) for i in range(18))
        served = await _send_head(port, under + b"Connection: close\r\n\r\n")
        await _normal_call(server)
    assert one_line == _TOO_LARGE + (
        b"content-type: text/plain; charset=utf-8\r\ncontent-length: 35\r\n"
        b"connection: close\r\n\r\nrequest head larger than 8192 bytes"
    )
    assert long_url.startswith(_TOO_LARGE) and long_url.endswith(b"larger than 8192 bytes")
    assert many_lines.startswith(_TOO_LARGE) and many_lines.endswith(b"more than 20 header lines")
    assert served.startswith(b"HTTP/1.1 200 OK\r\n")


async def test_keep_alive_and_pipelined_requests_each_get_the_whole_bound() -> None:
    # Four heads of 5 KiB each on one connection, sent at once: 20 KiB in all, each
    # within the 8 KiB bound: the bound is per head, not per connection.
    options = ServerOptions(limits=Limits(max_header_bytes=8 * 1024), grpc_port=None)
    head = _CARD + b"X-Pad: " + b"p" * 5000 + b"\r\n"
    async with BridgeServer(demo_agent(), options) as server:
        answer = await _send_head(
            server.http_port, (head + b"\r\n") * 3 + head + b"Connection: close\r\n\r\n"
        )
    assert answer.count(b"HTTP/1.1 200 OK\r\n") == 4


async def test_a_body_already_in_is_read_without_arming_its_deadline() -> None:
    # The body deadline (a timer per request) is for bodies still arriving: one the
    # listener's parser already holds whole is read at once, on the bridge's own listener.
    seen: list[bool] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(_buffered(receive))
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    listener = HttpListener(signals=False)
    await listener.start(app)
    try:
        whole = b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(whole)
        assert (await reader.read()).startswith(b"HTTP/1.1 204")
        writer.close()
        reader, writer = await asyncio.open_connection("127.0.0.1", listener.port)
        writer.write(whole[:-2])  # the head alone: the body is still to come
        await asyncio.sleep(0.2)
        writer.write(b"{}")
        assert (await reader.read()).startswith(b"HTTP/1.1 204")
        writer.close()
    finally:
        await listener.stop()
    assert seen == [True, False]
