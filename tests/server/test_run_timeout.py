"""An agent that hangs is cancelled by the run timeout (``--run-timeout``), the same way
on every door: its iterator is closed, the A2A task fails with a ``run_error`` whose code
is ``run_timeout`` (JSON-RPC, REST, gRPC), AG-UI ends with that ``RUN_ERROR``, and the
server keeps serving."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest
from a2a.types import TaskState

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, Limits, ServerOptions

from .helpers import collect, go_message, jsonrpc, sdk_client, sse_results, user_message

TIMEOUT = 0.5
MESSAGE = "agent run exceeded the run timeout (0.5 s)"


class Hanging:
    """Answers ``quick`` at once; otherwise sends one delta and never another."""

    def __init__(self) -> None:
        self.closed = 0

    def agent(self) -> FunctionAgent:
        async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
            if request.text == "quick":
                yield AgentEvent.final_text("done", "chatcmpl-quick")
                return
            try:
                yield AgentEvent.text_delta("thinking", "chatcmpl-hang")
                await asyncio.Event().wait()
            finally:
                self.closed += 1

        return FunctionAgent(name="hanging", description="hangs", fn=run)


@pytest.fixture
async def hanging() -> AsyncIterator[tuple[BridgeServer, Hanging]]:
    agent = Hanging()
    async with BridgeServer(
        agent.agent(), ServerOptions(limits=Limits(run_timeout=TIMEOUT))
    ) as server:
        yield server, agent


async def test_jsonrpc_stream_and_unary(hanging: tuple[BridgeServer, Hanging]) -> None:
    server, agent = hanging
    async with httpx.AsyncClient(timeout=30) as http:
        body = jsonrpc("message/stream", {"message": go_message("hang")})
        async with http.stream("POST", server.jsonrpc_url, json=body) as response:
            frames = [frame async for frame in sse_results(response)]
        last = frames[-1]
        assert last["status"]["state"] == "failed"
        assert last["metadata"]["error_type"] == "run_error"
        assert last["metadata"]["error_code"] == "run_timeout"
        assert last["metadata"]["error_message"] == MESSAGE
        unary = await http.post(
            server.jsonrpc_url, json=jsonrpc("message/send", {"message": go_message("hang")})
        )
        assert unary.json()["result"]["status"]["state"] == "failed"
        quick = await http.post(
            server.jsonrpc_url, json=jsonrpc("message/send", {"message": go_message("quick")})
        )
        assert quick.json()["result"]["parts"] == [{"kind": "text", "text": "done"}]
    assert agent.closed == 2


@pytest.mark.parametrize("transport", ["rest-1.0", "grpc-1.0"])
async def test_rest_and_grpc(hanging: tuple[BridgeServer, Hanging], transport: str) -> None:
    server, agent = hanging
    client = await sdk_client(server.agent_card(), transport, streaming=True)
    try:
        responses = await collect(client, user_message("hang"))
    finally:
        await client.close()
    status = responses[-1].status_update.status
    assert status.state == TaskState.TASK_STATE_FAILED
    assert agent.closed == 1


async def test_agui(hanging: tuple[BridgeServer, Hanging]) -> None:
    server, agent = hanging
    run_input = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "hang"}],
    }
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(server.agui_url, json=run_input)
    events = [
        json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")
    ]
    assert events[-1] == {"type": "RUN_ERROR", "message": MESSAGE, "code": "run_timeout"}
    assert agent.closed == 1
