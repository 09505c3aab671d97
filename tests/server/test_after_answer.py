"""A unary call's task is stored once the answer has left, when the store is in this
process (``server/a2a/after_answer.py``), and before it otherwise; either way the task
is there for the next request.

The proof is the caller's socket: when the store saves the completed task, the whole
answer is (in memory) or is not yet (sqlite) in the client's receive buffer, on a
kept-alive connection and on one the client asked to close.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from a2a.types import TaskState

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.codecs.a2a.json03 import result_to_json
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.options import Durability
from trpc_bridge.server.tasks.store import owner_context

from .helpers import go_message, jsonrpc


def _request(port: int, body: bytes, *, close: bool) -> bytes:
    connection = "Connection: close\r\n" if close else ""
    return (
        f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"{connection}Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def _answer(received: bytes) -> dict[str, Any] | None:
    """The JSON body of the whole answer in ``received``; None before it is all there."""
    head, sep, content = received.partition(b"\r\n\r\n")
    if not sep:
        return None
    length = next(
        int(line.split(b":")[1])
        for line in head.lower().split(b"\r\n")
        if line.startswith(b"content-length:")
    )
    if len(content) < length:
        return None
    answer: dict[str, Any] = json.loads(content[:length])
    return answer


def _waiting(sock: socket.socket) -> bytes:
    """What the client's socket has received and not read yet (without reading it)."""
    try:
        return sock.recv(1 << 16, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return b""


@contextlib.asynccontextmanager
async def _served(options: ServerOptions) -> AsyncIterator[tuple[BridgeServer, socket.socket]]:
    loop = asyncio.get_running_loop()
    async with BridgeServer(demo_agent(), options) as server:
        sock = socket.socket()
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, ("127.0.0.1", server.http_port))
            yield server, sock
        finally:
            sock.close()


async def _call(sock: socket.socket, port: int, body: dict[str, Any], *, close: bool) -> Any:
    loop = asyncio.get_running_loop()
    await loop.sock_sendall(sock, _request(port, json.dumps(body).encode(), close=close))
    received = b""
    while (answer := _answer(received)) is None:
        chunk = await loop.sock_recv(sock, 1 << 16)
        assert chunk, f"the connection closed mid-answer: {received!r}"
        received += chunk
    return answer


def _spy_saves(server: BridgeServer, sock: socket.socket) -> list[tuple[int, bool]]:
    """Each task the store saves, by state, with whether the whole answer was waiting
    in the client's socket then."""
    seen: list[tuple[int, bool]] = []
    store = server.task_store
    save = store.save

    async def spied(task: Any, context: Any) -> None:
        seen.append((task.status.state, _answer(_waiting(sock)) is not None))
        await save(task, context)

    store.save = spied  # type: ignore[method-assign]
    return seen


@pytest.mark.parametrize("close", [False, True])
async def test_in_memory_the_task_is_stored_once_the_answer_has_left(close: bool) -> None:
    async with _served(ServerOptions(port=0, grpc_port=None)) as (server, sock):
        saves = _spy_saves(server, sock)
        body = jsonrpc("message/send", {"message": go_message("hello")})
        answer = await _call(sock, server.http_port, body, close=close)
        assert answer["result"]["status"]["state"] == "completed"
        assert saves == [(TaskState.TASK_STATE_COMPLETED, True)]  # the answer already there
        if not close:  # the next request on the same connection finds the stored task
            asked = {"id": answer["result"]["id"]}
            got = await _call(sock, server.http_port, jsonrpc("tasks/get", asked), close=False)
            assert got["result"]["status"]["state"] == "completed"
            stored = await server.task_store.get(answer["result"]["id"], owner_context("anonymous"))
            assert stored is not None  # the protobuf built after the answer, of the same task
            assert result_to_json(stored) == answer["result"]


async def test_a_database_store_saves_the_task_before_the_answer(tmp_path: Path) -> None:
    """A save there can fail, and a failure must reach the caller as the answer."""
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    options = ServerOptions(port=0, grpc_port=None, durability=Durability(task_store=store))
    async with _served(options) as (server, sock):
        saves = _spy_saves(server, sock)
        body = jsonrpc("message/send", {"message": go_message("hello")})
        answer = await _call(sock, server.http_port, body, close=False)
        assert answer["result"]["status"]["state"] == "completed"
        assert saves and saves[-1] == (TaskState.TASK_STATE_COMPLETED, False)
