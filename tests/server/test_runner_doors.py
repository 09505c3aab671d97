"""Every door runs its agent through the one runner: A2A and ``/agui`` resolve the same
identity, keep the caller's trace, and record the same spans."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from opentelemetry.trace import SpanKind
from span_capture import Tracing, in_memory_tracing

from trpc_bridge.agent import Agent
from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.agents.scenarios import whoami
from trpc_bridge.codecs.trpc.decode import decode_stream
from trpc_bridge.message_aggregate import aggregate
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.telemetry.setup import set_w3c_propagator
from trpc_bridge.telemetry.spans import A2A_TRANSPORT

from .helpers import go_message, jsonrpc, sse_results

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{CALLER_SPAN}-01"


def _agui_body(text: str) -> dict[str, Any]:
    return {
        "threadId": "thread-1",
        "runId": "run-1",
        "messages": [{"id": "m1", "role": "user", "content": text}],
    }


def _agui_text(body: str) -> str:
    events = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ")]
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


def _client(agent: Agent, tracing: Tracing | None = None) -> httpx.AsyncClient:
    options = ServerOptions(tracer_provider=tracing.provider if tracing else None)
    app = BridgeServer(agent, options).starlette_app()
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bridge")


@pytest.fixture
def tracing() -> Tracing:
    set_w3c_propagator()
    return in_memory_tracing()


def _stream(text: str) -> dict[str, Any]:
    return jsonrpc("message/stream", {"message": go_message(text)})


async def _a2a_text(client: httpx.AsyncClient, headers: dict[str, str], text: str = "hi") -> str:
    async with client.stream("POST", "/", json=_stream(text), headers=headers) as response:
        frames = [frame async for frame in sse_results(response)]
    return "".join(m.text for m in aggregate(decode_stream(frames)))


@pytest.mark.parametrize(
    ("headers", "user"),
    [({}, "anonymous"), ({"X-User-ID": "  alice  "}, "alice"), ({"x-user-id": "bob"}, "bob")],
)
async def test_agui_and_a2a_resolve_the_same_identity(headers: dict[str, str], user: str) -> None:
    async with _client(whoami) as client:
        agui = await client.post("/agui", json=_agui_body("hi"), headers=headers)
        a2a = await _a2a_text(client, headers)
    assert _agui_text(agui.text) == f"user={user}"
    assert a2a == f"user={user}"


async def test_agui_and_a2a_refuse_the_same_overlong_identity() -> None:
    headers = {"X-User-ID": "u" * 256}
    async with _client(whoami) as client:
        agui = await client.post("/agui", json=_agui_body("hi"), headers=headers)
        a2a = await client.post("/", json=_stream("hi"), headers=headers)
    message = "X-User-ID is longer than 255 characters"
    assert agui.status_code == 400 and agui.json() == {"error": message}
    # The HTTP edge refuses it before the stream starts: a JSON-RPC Invalid Request.
    assert a2a.status_code == 400
    error = a2a.json()["error"]
    assert (error["code"], error["message"]) == (-32600, message)


@pytest.mark.parametrize("door", ["agui", "a2a"])
async def test_each_door_keeps_the_callers_trace_with_its_tool_spans(
    tracing: Tracing, door: str
) -> None:
    headers = {"traceparent": TRACEPARENT, "X-User-ID": "alice"}
    async with _client(demo_agent(), tracing) as client:
        if door == "agui":
            response = await client.post(
                "/agui", json=_agui_body("weather in Paris"), headers=headers
            )
            assert "Paris" in _agui_text(response.text)
        else:
            assert "Paris" in await _a2a_text(client, headers, "weather in Paris")
        spans = await tracing.wait_for(
            lambda found: (
                any(s.kind == SpanKind.SERVER for s in found)
                and any(s.name.startswith("execute_tool") for s in found)
            )
        )
    [server] = [s for s in spans if s.kind == SpanKind.SERVER]
    assert f"{server.context.trace_id:032x}" == TRACE_ID
    assert server.parent is not None and f"{server.parent.span_id:016x}" == CALLER_SPAN
    assert server.attributes is not None
    assert server.attributes[A2A_TRANSPORT] == ("AG-UI" if door == "agui" else "JSONRPC")
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    assert tools and all(
        t.parent is not None and t.parent.span_id == server.context.span_id for t in tools
    )
