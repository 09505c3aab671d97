"""A tfrs-speaking agent that is not a trpc agent (``tfrs_peer``, a2a-sdk alone) behind the
bridge as a proxy: its progress reaches AG-UI (checked by our sequence rules and by
``@ag-ui/client``) and trpc v0 callers (Go's request shape on JSON-RPC) as reasoning and
tool events, and the answer is still the terminal state's."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from agui_checks import check_sequence
from tfrs_peer import ANSWER, tfrs_peer

from trpc_bridge.client import RemoteAgent
from trpc_bridge.codecs.trpc.decode import decode_stream
from trpc_bridge.server import BridgeServer

from .helpers import GO_HEADERS, go_message, jsonrpc, sse_results
from .test_agui import NEEDS_NODE, run_agui_client, run_input, sse_events


@pytest.fixture
async def upstream() -> AsyncIterator[RemoteAgent]:
    async with tfrs_peer() as peer, await RemoteAgent.connect(peer.base_url) as remote:
        yield remote


async def test_agui_sees_reasoning_tools_and_the_answer(upstream: RemoteAgent) -> None:
    async with BridgeServer(upstream) as proxy, httpx.AsyncClient(timeout=30) as client:
        response = await client.post(f"{proxy.base_url}/agui", json=run_input("weather?"))
    events = sse_events(response.text)
    text = check_sequence(events)
    reasoning = "".join(e["delta"] for e in events if e["type"] == "REASONING_MESSAGE_CONTENT")
    assert reasoning.startswith("The user asks about the weather.")
    assert "Checking the forecast service." in reasoning
    starts = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert [(e["toolCallId"], e["toolCallName"]) for e in starts] == [("call-1", "get_weather")]
    assert [e["toolCallId"] for e in events if e["type"] == "TOOL_CALL_RESULT"] == ["call-1"]
    assert list(text.values())[-1] == ANSWER
    assert events[-1]["type"] == "RUN_FINISHED"


@NEEDS_NODE
async def test_agui_client_accepts_the_proxied_progress(upstream: RemoteAgent) -> None:
    summary = await run_agui_client(upstream, "weather?")
    roles = [m["role"] for m in summary["messages"]]
    assert "reasoning" in roles and "tool" in roles
    assert summary["types"][-1] == "RUN_FINISHED"


async def test_trpc_v0_caller_gets_reasoning_and_tool_frames(upstream: RemoteAgent) -> None:
    async with BridgeServer(upstream) as proxy, httpx.AsyncClient(timeout=30) as client:
        body = jsonrpc("message/stream", {"message": go_message("weather?")})
        async with client.stream(
            "POST", proxy.jsonrpc_url, json=body, headers=GO_HEADERS
        ) as response:
            frames = [f async for f in sse_results(response)]
    events = decode_stream(frames)  # what trpc's v0 client reads, rule for rule
    reasoning = "".join(c.delta.reasoning_content for e in events for c in e.choices)
    assert reasoning.startswith("The user asks about the weather.")
    calls = [t.function.name for e in events for c in e.choices for t in c.message.tool_calls]
    assert calls == ["get_weather"]
    assert any(c.message.tool_id == "call-1" for e in events for c in e.choices)
    texts = [c.delta.content or c.message.content for e in events for c in e.choices]
    assert [t for t in texts if t][-1] == ANSWER
