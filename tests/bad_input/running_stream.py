"""The bad-input suite's shared pieces: the agent whose stream runs through every case
(:class:`Ticker`, read by :class:`RunningStream`), and how a2a-sdk's answers look."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer

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


def error_info(reason: str) -> list[dict[str, Any]]:
    """The ``google.rpc.ErrorInfo`` details a2a-sdk attaches to its 1.0 errors."""
    info = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}
    return [{**info, "domain": "a2a-protocol.org", "metadata": {}}]


def nested(levels: int) -> Any:
    """``[[[…1…]]]``, ``levels`` deep."""
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value
