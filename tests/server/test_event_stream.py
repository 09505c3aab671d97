"""The bridge's SSE response (``server/http/event_stream.py``) against sse-starlette's
``EventSourceResponse`` (what it replaces), both served by uvicorn on loopback: the same
head and bytes, the same ping, and a client that leaves ends the stream (its iterator is
closed) while the server goes on serving. The head waits for the first frames, which
come after the run's first step."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import httpx
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.http.event_stream import EventStream
from trpc_bridge.server.http.listener import HttpListener

from .helpers import go_message, jsonrpc

FRAMES = [b'data: {"a":1}\r\n\r\n', b'data: {"b":"\xc3\xa9"}\r\n\r\n', b"data: {}\r\n\r\n"]
PING = re.compile(rb"^: ping - \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00:00\r\n\r\n$")


async def frames() -> AsyncIterator[bytes]:
    for frame in FRAMES:
        yield frame


@asynccontextmanager
async def served(routes: dict[str, Callable[[], Response]]) -> AsyncIterator[str]:
    async def endpoint(request: Request) -> Response:
        return routes[request.url.path]()

    app = Starlette(routes=[Route(path, endpoint, methods=["POST"]) for path in routes])
    listener = HttpListener()
    await listener.start(app)
    try:
        yield listener.url
    finally:
        await listener.stop()


def _head(response: httpx.Response) -> list[tuple[str, str]]:
    return [(k, v) for k, v in response.headers.multi_items() if k != "date"]


async def test_the_same_head_and_bytes_as_sse_starlette() -> None:
    routes: dict[str, Callable[[], Response]] = {
        "/ours": lambda: EventStream(frames()),
        "/theirs": lambda: EventSourceResponse(frames()),
    }
    async with served(routes) as url, httpx.AsyncClient(timeout=10) as http:
        ours = await http.post(url + "/ours")
        theirs = await http.post(url + "/theirs")
    assert ours.status_code == theirs.status_code == 200
    assert _head(ours) == _head(theirs)
    assert ours.content == theirs.content == b"".join(FRAMES)


async def test_a_quiet_stream_is_pinged_as_sse_starlette_pings() -> None:
    async def quiet() -> AsyncIterator[bytes]:
        await asyncio.sleep(0.5)
        yield FRAMES[0]

    routes: dict[str, Callable[[], Response]] = {
        "/ours": lambda: EventStream(quiet(), ping=0.1),
        "/theirs": lambda: EventSourceResponse(quiet(), ping=0.1),
    }
    async with served(routes) as url, httpx.AsyncClient(timeout=10) as http:
        for path in routes:
            async with http.stream("POST", url + path) as response:
                chunks = [chunk async for chunk in response.aiter_raw()]
            pings, last = chunks[:-1], chunks[-1]
            assert pings and all(PING.match(ping) for ping in pings), (path, chunks)
            assert last == FRAMES[0], path


async def test_a_client_that_leaves_ends_the_stream_and_the_server_serves_on() -> None:
    closed = asyncio.Event()

    async def endless() -> AsyncIterator[bytes]:
        try:
            yield FRAMES[0]
            await asyncio.sleep(3600)
            yield FRAMES[1]
        finally:
            closed.set()

    routes: dict[str, Callable[[], Response]] = {
        "/endless": lambda: EventStream(endless()),
        "/short": lambda: EventStream(frames()),
    }
    async with served(routes) as url:
        async with httpx.AsyncClient(timeout=10) as http:
            async with http.stream("POST", url + "/endless") as response:
                first = await anext(response.aiter_raw())
            assert first == FRAMES[0]
        await asyncio.wait_for(closed.wait(), timeout=10)
        async with httpx.AsyncClient(timeout=10) as http:
            assert (await http.post(url + "/short")).content == b"".join(FRAMES)


async def test_a_served_run_takes_its_first_step_before_the_head_is_written() -> None:
    """The head leaves with the first frames, and those after the run's first step: a
    proxied run's request to its upstream goes out before the caller is written to
    (``server/a2a/handler.py``)."""
    seen: list[str] = []

    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        seen.append("agent")
        yield AgentEvent.text_delta("hi", "chatcmpl-first")

    server = BridgeServer(
        FunctionAgent(name="first", description="first step", fn=run),
        ServerOptions(grpc_port=None),
    )
    app = server.starlette_app()

    async def watched(scope: Scope, receive: Receive, send: Send) -> None:
        async def noted(message: Message) -> None:
            seen.append(message["type"])
            await send(message)

        await app(scope, receive, noted)

    body = jsonrpc("message/stream", {"message": go_message("hi")})
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=watched), base_url="http://bridge"
    ) as http:
        response = await http.post("/", json=body, headers={"X-User-ID": "alice"})
    assert response.status_code == 200 and '"completed"' in response.text
    start = seen.index("http.response.start")
    assert seen.index("agent") < start
    assert seen[start + 1] == "http.response.body"  # the head went with the first frames
