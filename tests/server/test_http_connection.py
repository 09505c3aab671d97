"""The bridge's HTTP/1.1 connection protocol (``server/http/connection.py``) on a real
listener and raw sockets, for what the bridge's own routes do not exercise: ``Expect:
100-continue``, ``HEAD``, framing chosen by the app's headers, pipelining, keep-alive,
a malformed request, an app that fails or breaks the ASGI rules, and header bytes HTTP
forbids. The bounds (deadlines, sizes, upgrade offers, the connection cap) have their own
tests (``test_limits.py``, ``test_http_upgrade.py``)."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from starlette.types import ASGIApp

from trpc_bridge.server.http.listener import HttpListener


async def _read_body(receive: Any) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += bytes(message.get("body", b""))
        if not message.get("more_body"):
            return body


async def echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers the request's method, path, query and body (content-length framed)."""
    body = await _read_body(receive)
    answer = b"%s %s ?%s %s" % (
        scope["method"].encode(),
        scope["path"].encode(),
        scope["query_string"],
        body,
    )
    headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(answer))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


async def streamed(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """No content-length: the body is chunked, one chunk per send."""
    await send({"type": "http.response.start", "status": 200, "headers": []})
    for piece in (b"one", b"", b"three"):
        await send({"type": "http.response.body", "body": piece, "more_body": True})
        await asyncio.sleep(0)
    await send({"type": "http.response.body", "body": b""})


async def failing(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["path"] == "/after-start":
        await send({"type": "http.response.start", "status": 200, "headers": []})
    raise ValueError("secret detail")


async def silent(scope: dict[str, Any], receive: Any, send: Any) -> None:
    pass  # returns without a response


async def bad_header(scope: dict[str, Any], receive: Any, send: Any) -> None:
    value = b"a\r\nset-cookie: injected" if scope["path"] == "/value" else b"ok"
    name = b"x bad" if scope["path"] == "/name" else b"x-fine"
    await send({"type": "http.response.start", "status": 200, "headers": [(name, value)]})
    await send({"type": "http.response.body", "body": b""})


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[ASGIApp], Awaitable[int]]]:
    listeners: list[HttpListener] = []

    async def start(app: ASGIApp) -> int:
        listener = HttpListener(signals=False)
        await listener.start(app)
        listeners.append(listener)
        return listener.port

    yield start
    for listener in listeners:
        await listener.stop()


async def ask(port: int, request: bytes, *, pause_after: bytes = b"") -> bytes:
    """Send ``request`` (the part up to ``pause_after`` first, the rest once the server
    answered it something); everything the server sends until it closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        if pause_after:
            head, _, rest = request.partition(pause_after)
            writer.write(head + pause_after)
            interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            writer.write(rest)
            return interim + await asyncio.wait_for(reader.read(), 30)
        writer.write(request)
        return await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()


def post(path: bytes, body: bytes, *extra: bytes, close: bool = True) -> bytes:
    lines = [b"POST %s HTTP/1.1" % path, b"Host: t", b"Content-Length: %d" % len(body), *extra]
    if close:
        lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


async def test_a_request_is_answered_with_its_own_framing_and_closed(serve: Any) -> None:
    port = await serve(echo)
    answer = await ask(port, post(b"/a%20b?x=1", b"hello"))
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"HTTP/1.1 200 OK"
    assert b"content-length: 20" in lines and b"connection: close" in lines
    assert any(line.startswith(b"date: ") for line in lines)  # the server's own headers
    assert body == b"POST /a b ?x=1 hello"


async def test_expect_100_continue_is_answered_before_the_body_is_read(serve: Any) -> None:
    port = await serve(echo)
    request = post(b"/", b"payload", b"Expect: 100-continue")
    answer = await ask(port, request, pause_after=b"\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")
    assert answer.endswith(b"POST / ? payload")


async def test_head_gets_the_headers_and_no_body(serve: Any) -> None:
    port = await serve(echo)
    answer = await ask(port, b"HEAD /x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK") and b"content-length: 10" in head
    assert body == b""


async def test_a_body_without_content_length_is_chunked(serve: Any) -> None:
    port = await serve(streamed)
    answer = await ask(port, b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.split(b"\r\n")
    assert body == b"3\r\none\r\n5\r\nthree\r\n0\r\n\r\n"


async def test_pipelined_and_keep_alive_requests_are_answered_in_order(serve: Any) -> None:
    port = await serve(echo)
    requests = post(b"/1", b"a", close=False) + post(b"/2", b"bb", close=False)
    answer = await ask(port, requests + post(b"/3", b"ccc"))
    assert answer.count(b"HTTP/1.1 200 OK\r\n") == 3
    assert answer.index(b"/1 ? a") < answer.index(b"/2 ? bb") < answer.index(b"/3 ? ccc")


async def test_a_malformed_request_gets_400_and_the_server_goes_on(serve: Any) -> None:
    port = await serve(echo)
    answer = await ask(port, b"NOT HTTP AT ALL\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert answer.endswith(b"Invalid HTTP request received.")
    assert (await ask(port, post(b"/", b"x"))).startswith(b"HTTP/1.1 200 OK")


async def test_an_app_that_fails_gets_500_without_its_error(serve: Any) -> None:
    port = await serve(failing)
    answer = await ask(port, post(b"/", b""))
    assert answer.startswith(b"HTTP/1.1 500 Internal Server Error\r\n")
    assert answer.endswith(b"\r\n\r\nInternal Server Error") and b"secret" not in answer
    # After the response started, the only honest thing left is to cut it short.
    cut = await ask(port, post(b"/after-start", b""))
    assert cut.startswith(b"HTTP/1.1 200 OK") and not cut.endswith(b"0\r\n\r\n")


async def test_an_app_that_answers_nothing_gets_500(serve: Any) -> None:
    port = await serve(silent)
    assert (await ask(port, post(b"/", b""))).startswith(b"HTTP/1.1 500 ")


@pytest.mark.parametrize("path", [b"/value", b"/name"])
async def test_forbidden_header_bytes_never_reach_the_wire(serve: Any, path: bytes) -> None:
    port = await serve(bad_header)
    answer = await ask(port, post(path, b""))
    assert b"injected" not in answer and b"x bad" not in answer
    assert answer.startswith(b"HTTP/1.1 500 ")


def _read_to_end(port: int, request: bytes) -> tuple[bytes, float]:
    """A blocking client (its own thread): everything until the server's FIN, and when
    that came."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer, time.monotonic()


async def test_a_closing_response_ends_the_connection_with_its_last_bytes(serve: Any) -> None:
    # The app holds the event loop after its last send; the client still reads the end of
    # the connection at once, not once the loop gets round to closing the transport.
    released: list[float] = []

    async def busy_after_the_answer(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await echo(scope, receive, send)
        time.sleep(1.0)  # blocking on purpose: nothing else on the loop runs meanwhile
        released.append(time.monotonic())

    port = await serve(busy_after_the_answer)
    answer, ended = await asyncio.to_thread(_read_to_end, port, post(b"/", b"x"))
    assert answer.endswith(b"POST / ? x")
    assert released and ended < released[0]
    # Kept alive, the connection stays open: the next request on it is answered.
    port = await serve(echo)
    answer = await ask(port, post(b"/1", b"", close=False) + post(b"/2", b""))
    assert answer.endswith(b"POST /2 ? ")
