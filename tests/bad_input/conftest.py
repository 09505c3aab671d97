"""One server per test module, and another caller's stream running through every case.

Each module of ``tests/bad_input/`` sends its bad requests to a bridge serving
:func:`ticker`, whose JSON-RPC stream (:class:`RunningStream`) is started before the
first case and must still be running after each; the module's last test stops it and
checks it completed with every delta in order.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions

#: The request size limit of the bad-input servers.
LIMIT = 64 * 1024


class Ticker:
    """An agent that streams ``t0 t1 …`` until :meth:`stop` (at most ``cap`` deltas)."""

    def __init__(self, cap: int = 200_000) -> None:
        self.stopped = asyncio.Event()
        self.cap = cap

    def stop(self) -> None:
        self.stopped.set()

    def agent(self) -> FunctionAgent:
        async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
            if request.text != "tick":
                yield AgentEvent.final_text("ok", "chatcmpl-ok")
                return
            for i in range(self.cap):
                if self.stopped.is_set():
                    return
                yield AgentEvent.text_delta(f"t{i} ", "chatcmpl-tick")
                await asyncio.sleep(0.002)

        return FunctionAgent(name="ticker", description="ticks", fn=run)


class RunningStream:
    """The other caller: a JSON-RPC ``message/stream`` of the ticker, read in the
    background."""

    def __init__(self, server: BridgeServer, ticker: Ticker) -> None:
        self.server = server
        self.ticker = ticker
        self.frames: list[dict[str, Any]] = []
        self._task: asyncio.Task[None] | None = None
        self._first = asyncio.Event()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._read())
        await asyncio.wait_for(self._first.wait(), 30)

    async def _read(self) -> None:
        message = {
            "kind": "message",
            "messageId": "m-tick",
            "role": "user",
            "parts": [{"kind": "text", "text": "tick"}],
            "metadata": {"interaction_spec_version": "0.1"},
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": "message/stream", "params": {}}
        body["params"] = {"message": message}
        async with (
            httpx.AsyncClient(timeout=None) as http,
            http.stream("POST", self.server.jsonrpc_url, json=body) as response,
        ):
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    self.frames.append(json.loads(line[5:])["result"])
                    self._first.set()

    def check_running(self) -> None:
        assert self._task is not None and not self._task.done(), "the other stream ended"

    async def finish(self) -> None:
        """Stop the ticker; the stream must complete with every delta, in order."""
        self.check_running()
        self.ticker.stop()
        assert self._task is not None
        await asyncio.wait_for(self._task, 30)
        assert self.frames[0]["status"]["state"] == "submitted"
        assert self.frames[-1]["status"]["state"] == "completed"
        chunks = [
            part["text"]
            for frame in self.frames
            if frame.get("kind") == "artifact-update"
            and frame.get("metadata", {}).get("object_type") == "chat.completion.chunk"
            for part in frame["artifact"]["parts"]
        ]
        assert chunks, "the stream carried no text"
        assert "".join(chunks) == "".join(f"t{i} " for i in range(len(chunks)))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served() -> AsyncIterator[tuple[BridgeServer, RunningStream]]:
    ticker = Ticker()
    options = ServerOptions(max_request_bytes=LIMIT)
    async with BridgeServer(ticker.agent(), options) as server:
        stream = RunningStream(server, ticker)
        await stream.start()
        yield server, stream
        ticker.stop()


@pytest.fixture
def server(served: tuple[BridgeServer, RunningStream]) -> BridgeServer:
    return served[0]


@pytest.fixture
def other_stream(served: tuple[BridgeServer, RunningStream]) -> RunningStream:
    return served[1]
