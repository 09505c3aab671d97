"""The lean client a RemoteAgent reads its JSON-RPC streams with (``client/lean_http.py``,
``client/passthrough.RawResults``), against real servers on loopback: the same frames as
the httpx reader however the body is cut, connections kept alive (and drained when a
consumer stops early), failures in words, no header injection, TLS verified, and httpx
kept whenever an HTTP proxy is configured."""

from __future__ import annotations

import asyncio
import random
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from a2a.types import Message
from replay_server import ReplayPeer, serving
from security_peers import Pki
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trpc_bridge.client import RemoteAgent
from trpc_bridge.client.card import Endpoint
from trpc_bridge.client.errors import RemoteCallError
from trpc_bridge.client.jsonrpc import JsonRpcTransport
from trpc_bridge.client.lean_http import LeanHttp, LeanHttpError, direct
from trpc_bridge.client.passthrough import RawResults
from trpc_bridge.client.tls import ClientTls
from trpc_bridge.codecs.trpc.request import request_to_message
from trpc_bridge.events import AgentRequest
from trpc_bridge.server.http.listener import HttpListener

ROOT = Path(__file__).resolve().parents[2]
GO_STREAM = (ROOT / "interop" / "go" / "testdata" / "sse_v0" / "reasoning.sse").read_bytes()
MESSAGE: Message = request_to_message(AgentRequest(text="hi", context_id="c1"), message_id="m1")


@pytest.fixture
async def peer() -> AsyncIterator[ReplayPeer]:
    replay = ReplayPeer(stream_chunks=[GO_STREAM])
    async with serving(replay):
        yield replay


def _raw(url: str, http: httpx.AsyncClient, lean: LeanHttp | None = None) -> RawResults:
    transport = JsonRpcTransport(http, Endpoint(url, "JSONRPC", "0.3"))
    return RawResults(transport, url, lean or LeanHttp(url))


async def test_the_same_frames_as_httpx_however_the_body_is_cut(peer: ReplayPeer) -> None:
    """Cut anywhere (inside a line, between CR and LF), LF or CRLF line ends."""
    async with httpx.AsyncClient() as http:
        transport = JsonRpcTransport(http, Endpoint(peer.url, "JSONRPC", "0.3"))
        raw = _raw(peer.url, http)
        for seed in range(30):
            body = GO_STREAM.replace(b"\n", b"\r\n") if seed % 2 else GO_STREAM
            points = sorted(random.Random(seed).sample(range(1, len(body)), seed % 12))
            cuts = zip([0, *points], [*points, len(body)], strict=True)
            peer.stream_chunks = [body[a:b] for a, b in cuts]
            expected = [frame async for frame in transport.stream(MESSAGE, {})]
            assert expected
            assert [frame async for frame in raw.stream(MESSAGE, {})] == expected
        await raw.aclose()


async def test_connections_are_kept_alive_and_drained(peer: ReplayPeer) -> None:
    lean = LeanHttp(peer.url)
    async with httpx.AsyncClient() as http:
        raw = _raw(peer.url, http, lean)
        for _ in range(3):
            assert [frame async for frame in raw.stream(MESSAGE, {})]
        assert len(lean._idle) == 1
        kept = lean._idle[0]
        # A consumer that stops after the first result: the rest is read, unread, and the
        # connection goes back to the pool.
        results = raw.batches(MESSAGE, {})
        await anext(results)
        await results.aclose()
        for _ in range(50):
            if lean._idle:
                break
            await asyncio.sleep(0.01)
        assert lean._idle == [kept]
        await lean.aclose()


async def test_a_connection_idle_too_long_is_not_reused(peer: ReplayPeer) -> None:
    """Servers close kept-alive connections after a few idle seconds; one idle past the
    expiry is closed instead of written to (where the request could be lost)."""
    lean = LeanHttp(peer.url, keepalive_expiry=0.2)
    async with httpx.AsyncClient() as http:
        raw = _raw(peer.url, http, lean)
        assert [frame async for frame in raw.stream(MESSAGE, {})]
        (first,) = lean._idle
        assert [frame async for frame in raw.stream(MESSAGE, {})]
        assert lean._idle == [first]  # reused at once
        await asyncio.sleep(0.3)
        assert [frame async for frame in raw.stream(MESSAGE, {})]
        (second,) = lean._idle
        assert second is not first and first.transport is not None
        assert first.transport.is_closing()
        await lean.aclose()


async def _close_mid_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 500\r\n\r\n"
    )
    writer.write(b'data: {"jsonrpc":"2.0","id":1,"result":{"kind":"task"')
    await writer.drain()
    writer.close()


async def _whole_answer_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    await reader.readexactly(length)
    body = f"{len(GO_STREAM):x}\r\n".encode() + GO_STREAM + b"\r\n0\r\n\r\n"
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    writer.write(head + body)  # one write: one read on loopback
    await writer.drain()
    writer.close()


async def test_an_answer_that_has_ended_is_read_to_its_end_in_one_turn() -> None:
    """The proxy's last frames leave in one write with the batch before them: a batch
    that completes the answer is followed by the stream's end without the event loop
    running others in between (a batch with more to come is not)."""
    server = await asyncio.start_server(_whole_answer_at_once, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
    loop = asyncio.get_running_loop()
    async with server, httpx.AsyncClient() as http:
        raw = _raw(url, http)
        others: list[int] = []
        batches = 0
        async for batch in raw.batches(MESSAGE, {}):
            assert batch
            batches += 1
            loop.call_soon(others.append, batches)
        assert batches == 1
        assert others == []
        await raw.aclose()


async def test_failures_in_words() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed_url = f"http://127.0.0.1:{unused.getsockname()[1]}/"
    async with httpx.AsyncClient() as http:
        raw = _raw(closed_url, http)
        with pytest.raises(RemoteCallError, match="failed: cannot connect"):
            [frame async for frame in raw.stream(MESSAGE, {})]
        server = await asyncio.start_server(_close_mid_answer, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
        async with server:
            with pytest.raises(RemoteCallError, match="closed before the answer was complete"):
                [frame async for frame in _raw(url, http).stream(MESSAGE, {})]


async def test_an_idle_upstream_times_out(peer: ReplayPeer) -> None:
    peer.hang = True
    async with httpx.AsyncClient() as http:
        raw = _raw(peer.url, http, LeanHttp(peer.url, idle_timeout=0.3))
        with pytest.raises(RemoteCallError, match="timed out"):
            [frame async for frame in raw.stream(MESSAGE, {})]


async def test_a_json_rpc_error_instead_of_a_stream(peer: ReplayPeer) -> None:
    peer.stream_json = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "no"}}
    async with httpx.AsyncClient() as http:
        with pytest.raises(RemoteCallError, match="-32001 no"):
            [frame async for frame in _raw(peer.url, http).stream(MESSAGE, {})]


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\0", "é"])
async def test_a_header_that_cannot_be_sent_is_refused(peer: ReplayPeer, value: str) -> None:
    """Identity and credentials travel in headers: one line each, nothing smuggled."""
    with pytest.raises(LeanHttpError, match="cannot be sent"):
        await LeanHttp(peer.url).post("/", b"{}", {"X-User-ID": value})
    assert not peer.calls


async def test_tls_is_verified(tmp_path: Path) -> None:
    pki = Pki.make(tmp_path)
    listener = HttpListener()
    tls = ClientTls(str(pki.ca_pem))

    async def answer(request: Request) -> Response:
        return Response(b'{"jsonrpc":"2.0","id":1,"result":{}}', media_type="application/json")

    app = Starlette(routes=[Route("/", answer, methods=["POST"])])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(pki.server_cert, pki.server_key)
    await listener.start(app, tls=context)
    url = listener.url.replace("http://", "https://")
    try:
        trusted = await LeanHttp(url, ssl_context=tls.ssl_context()).post("/", b"{}", {})
        assert trusted.status == 200
        with pytest.raises(LeanHttpError, match="TLS failed"):
            await LeanHttp(url, ssl_context=ClientTls().ssl_context()).post("/", b"{}", {})
    finally:
        await listener.stop()


async def test_an_http_proxy_keeps_httpx(peer: ReplayPeer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lean client does not speak to proxies: with one configured for the upstream,
    the agent reads its streams with httpx, which does, and takes no passthrough."""
    async with await RemoteAgent.connect(peer.url) as agent:
        assert agent.passes_through
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
        monkeypatch.setenv("NO_PROXY", "")
        assert not direct(peer.url)
        proxied = RemoteAgent(agent.card, agent.endpoint, agent._transport, agent._http, lean=True)
        assert not proxied.passes_through
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert direct(peer.url)
