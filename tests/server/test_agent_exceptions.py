"""An agent that raises: the caller gets a failed task with trpc's structured error
metadata naming only the exception type (its text may hold secrets), the server logs
the rest, and keeps serving."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import httpx
import pytest

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions

from .helpers import GO_HEADERS, go_message, jsonrpc, sse_results

SECRET = "postgres://bridge:hunter2@db/prod"


async def _explodes(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    if "boom" not in request.text:
        yield AgentEvent.final_text("fine", "chatcmpl-ok")
        return
    yield AgentEvent.text_delta("Working", "chatcmpl-boom")
    raise ConnectionError(f"cannot reach {SECRET}")


async def test_agent_exception_is_a_failed_task_without_its_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = FunctionAgent("exploding", "raises", _explodes)
    async with (
        BridgeServer(agent, ServerOptions(grpc_port=None)) as server,
        httpx.AsyncClient(timeout=None) as http,
    ):
        body = jsonrpc("message/stream", {"message": go_message("boom")})
        with caplog.at_level(logging.ERROR, logger="trpc_bridge.agent"):
            async with http.stream(
                "POST", server.jsonrpc_url, json=body, headers=GO_HEADERS
            ) as response:
                frames = [frame async for frame in sse_results(response)]
        last = frames[-1]
        assert last["kind"] == "status-update" and last["final"] is True
        assert last["status"]["state"] == "failed"
        assert last["metadata"]["object_type"] == "error"
        assert last["metadata"]["error_type"] == "run_error"
        assert last["metadata"]["error_message"] == "agent failed: ConnectionError"
        assert last["metadata"]["task_state"] == "failed"
        assert SECRET not in str(frames)
        assert SECRET in caplog.text  # the operator still sees it

        stored = await http.post(
            server.jsonrpc_url,
            json=jsonrpc("tasks/get", {"id": last["taskId"]}),
            headers=GO_HEADERS,
        )
        assert stored.json()["result"]["status"]["state"] == "failed"

        again = jsonrpc("message/send", {"message": go_message("hello")})
        ok = await http.post(server.jsonrpc_url, json=again, headers=GO_HEADERS)
        assert ok.json()["result"]["parts"][0]["text"] == "fine"
