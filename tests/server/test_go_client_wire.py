"""Raw 0.3 JSON-RPC exactly as trpc-agent-go's v0 client sends it (vector Q01), checked
frame by frame against the reference shapes (S12, S01, S04, S05, S03, S13, S16) over a
real loopback socket. The agent replays the vectors' input events, so every frame must
equal the vector's ``expect`` under the same documented normalisations as the codec
vectors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from test_vectors_encode import compare, load, strip_extra_parts

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions

from .helpers import GO_HEADERS, go_message, jsonrpc, sse_results

VECTORS = Path(__file__).parent.parent / "vectors"
STREAM = ["S01", "S04", "S05", "S03", "S13"]


def replay(names: list[str]) -> FunctionAgent:
    vectors = [load(VECTORS / f"{n}.json") for n in names]

    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        for vector in vectors:
            for raw in vector["input"][-1:]:  # S03's first input is S01's event
                yield AgentEvent.model_validate(raw)

    return FunctionAgent(name="weather-agent", description="Weather", fn=run)


def _with_ids(expected: dict[str, Any], task_id: str) -> dict[str, Any]:
    return {k: (task_id if k == "taskId" else v) for k, v in expected.items()}


async def test_streaming_frames_match_reference() -> None:
    async with (
        BridgeServer(replay(STREAM), ServerOptions(grpc_port=None)) as server,
        httpx.AsyncClient(timeout=None) as http,
    ):
        body = jsonrpc("message/stream", {"message": go_message("What is the weather?")})
        async with http.stream("POST", server.jsonrpc_url, json=body, headers=GO_HEADERS) as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            frames = [f async for f in sse_results(r)]
    task_id = frames[0]["taskId"]
    assert task_id.startswith("task-")
    expected = [load(VECTORS / "S12.json")["expect"][0]]
    for name in STREAM:
        vector = load(VECTORS / f"{name}.json")
        expected.extend(vector["expect"][-1:] if name != "S13" else vector["expect"])
    expected = [_with_ids(e, task_id) for e in expected]
    s04 = load(VECTORS / "S04.json")
    tool_frames = frames[2:3]
    strip_extra_parts(tool_frames, s04)
    compare(frames, expected)


async def test_unary_s16_exact() -> None:
    s16 = load(VECTORS / "S16.json")

    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        for raw in s16["input"]:
            yield AgentEvent.model_validate(raw)

    agent = FunctionAgent(name="weather-agent", description="Weather", fn=run)
    async with (
        BridgeServer(agent, ServerOptions(grpc_port=None)) as server,
        httpx.AsyncClient(timeout=None) as http,
    ):
        body = jsonrpc("message/send", {"message": go_message("hi")})
        headers = dict(GO_HEADERS, Accept="application/json")
        response = await http.post(server.jsonrpc_url, json=body, headers=headers)
    compare(response.json()["result"], s16["expect"])
