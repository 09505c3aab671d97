"""``POST /agui`` over real HTTP: httpx against the ASGI app, uvicorn on loopback for
disconnects, and ``@ag-ui/client`` (Node) whose own verification must accept the stream."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
from agui_checks import check_sequence
from agui_showcase import ShowcaseAgent, loopback
from starlette.applications import Starlette

from trpc_bridge.agent import Agent
from trpc_bridge.agents import scenarios
from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.cli.proxy import run_proxy
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.doors.agui import agui_routes
from trpc_bridge.server.runner import AgentRunner

NODE_HARNESS = Path(__file__).parents[1] / "agui_node"


def run_input(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "threadId": "thread-1",
        "runId": "run-1",
        "messages": [{"id": "m1", "role": "user", "content": text}],
        **extra,
    }


def sse_events(body: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :]) for line in body.splitlines() if line.startswith("data: ")
    ]


def client_for(agent: ShowcaseAgent) -> httpx.AsyncClient:
    app = Starlette(routes=agui_routes(AgentRunner(agent)))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bridge")


async def test_showcase_stream_is_valid_and_carries_the_request() -> None:
    agent = ShowcaseAgent()
    async with client_for(agent) as client:
        response = await client.post(
            "/agui", json=run_input("weather?"), headers={"X-User-ID": "alice"}
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    text = check_sequence(events)
    assert text == {"resp-1": "Let me check.", "resp-2": "It is 20°C (68°F) at 10:30."}
    types = {e["type"] for e in events}
    assert {
        "REASONING_MESSAGE_CONTENT",
        "TOOL_CALL_RESULT",
        "ACTIVITY_DELTA",
        "STATE_DELTA",
    } <= types
    assert events[-1]["type"] == "RUN_FINISHED"
    [request] = agent.requests
    assert (request.text, request.context_id, request.invocation_id, request.user_id) == (
        "weather?",
        "thread-1",
        "run-1",
        "alice",
    )


@pytest.mark.parametrize(
    ("text", "message", "code"),
    [
        ("error", "upstream model overloaded", "503"),
        ("raise", "agent failed: RuntimeError", "run_error"),
    ],
)
async def test_failures_close_everything_then_run_error(text: str, message: str, code: str) -> None:
    async with client_for(ShowcaseAgent()) as client:
        response = await client.post("/agui", json=run_input(text))
    events = sse_events(response.text)
    check_sequence(events)
    assert events[-1] == {"type": "RUN_ERROR", "message": message, "code": code}


@pytest.mark.parametrize(
    "body",
    [  # bodies that are not JSON at all: tests/bad_input/test_agui.py
        b"[]",
        b'{"threadId": "t"}',
        b'{"threadId": "t", "runId": "r", "messages": [{"role": "robot"}]}',
    ],
)
async def test_invalid_run_input_is_http_400_json(body: bytes) -> None:
    async with client_for(ShowcaseAgent()) as client:
        response = await client.post(
            "/agui", content=body, headers={"content-type": "application/json"}
        )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid RunAgentInput"
    assert isinstance(response.json()["detail"], list)


async def test_a_thread_id_of_1_mb_is_refused_and_the_door_keeps_serving() -> None:
    # A2A refuses a contextId over 255 characters; the AG-UI thread id becomes that id.
    async with BridgeServer(ShowcaseAgent()) as server, httpx.AsyncClient(timeout=30) as http:
        refused = await http.post(server.agui_url, json=run_input("hi", threadId="t" * 2**20))
        served = await http.post(server.agui_url, json=run_input("weather?"))
    assert (refused.status_code, refused.json()) == (
        400,
        {"error": "threadId is longer than 255 characters"},
    )
    check_sequence(sse_events(served.text))


async def test_state_keys_from_the_input_can_be_removed() -> None:
    async with client_for(ShowcaseAgent()) as client:
        response = await client.post("/agui", json=run_input("hi", state={"gone": 1}))
    [delta] = [e for e in sse_events(response.text) if e["type"] == "STATE_DELTA"]
    assert {"op": "remove", "path": "/gone"} in delta["delta"]


async def test_client_disconnect_closes_the_agent_iterator() -> None:
    agent = ShowcaseAgent()
    async with loopback(agui_routes(AgentRunner(agent))) as base, httpx.AsyncClient() as client:
        async with client.stream("POST", f"{base}/agui", json=run_input("hang")) as response:
            async for line in response.aiter_lines():
                if "TEXT_MESSAGE_CONTENT" in line:
                    break
        # Generous bound for a loaded machine: this is liveness, not speed.
        await asyncio.wait_for(agent.closed.wait(), timeout=30)


NEEDS_NODE = pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")


async def run_agui_client(agent: Agent, text: str) -> dict[str, Any]:
    """Drive ``/agui`` for ``agent`` with ``@ag-ui/client`` (its verification on) and
    return the harness's summary, asserting the client accepted the stream."""
    assert (NODE_HARNESS / "node_modules" / "@ag-ui" / "client").is_dir(), (
        "run `make tests/agui_node/node_modules` (npm ci) first"
    )
    async with loopback(agui_routes(AgentRunner(agent))) as base:
        node = await asyncio.create_subprocess_exec(
            "node",
            str(NODE_HARNESS / "run.mjs"),
            f"{base}/agui",
            text,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await node.communicate()
    summary: dict[str, Any] = json.loads(out)
    assert summary["ok"], (summary["error"], err.decode())
    assert summary["warnings"] == []
    return summary


@NEEDS_NODE
@pytest.mark.parametrize(
    ("agent", "text"),
    [
        *[
            pytest.param(demo_agent(), p, id=f"demo: {p}")
            for p in ("weather in Shanghai?", "run some code", "please fail")
        ],
        *[
            pytest.param(getattr(scenarios, name), "hi", id=f"scenario: {name}")
            for name in sorted(scenarios.SCRIPTS)
        ],
    ],
)
async def test_agui_client_accepts_every_demo_prompt_and_interop_scenario(
    agent: Agent, text: str
) -> None:
    summary = await run_agui_client(agent, text)
    failing = "fail" in text or getattr(agent, "scenario", "") == "error"
    assert summary["types"][-1] == ("RUN_ERROR" if failing else "RUN_FINISHED")


@NEEDS_NODE
@pytest.mark.parametrize("text", ["weather?", "error", "raise"])
async def test_agui_client_verification_accepts_the_stream(text: str) -> None:
    summary = await run_agui_client(ShowcaseAgent(), text)
    assert summary["types"][0] == "RUN_STARTED"
    if text == "weather?":
        assert summary["types"][-1] == "RUN_FINISHED"
        by_id = {m["id"]: m for m in summary["messages"]}
        assert by_id["resp-2"]["content"] == "It is 20°C (68°F) at 10:30."
        assert by_id["reasoning-resp-1"]["role"] == "reasoning"
        assert [c["id"] for c in by_id["resp-1"]["toolCalls"]] == ["call_w", "call_t"]
        assert by_id["result-call_w"]["role"] == "tool"
        activity = next(m for m in summary["messages"] if m["role"] == "activity")
        assert activity["content"] == {"code": "print(20 * 9 / 5 + 32)", "output": "68.0\n"}
        assert summary["state"] == {"units": "C", "last_city": "Beijing"}
    else:
        assert summary["types"][-1] == "RUN_ERROR"


async def test_bridge_server_serves_agui_next_to_a2a() -> None:
    agent = ShowcaseAgent()
    async with BridgeServer(agent) as server, httpx.AsyncClient() as client:
        card = await client.get(server.card_url)
        response = await client.post(f"{server.base_url}/agui", json=run_input("weather?"))
    assert card.status_code == 200
    assert response.status_code == 200
    check_sequence(sse_events(response.text))


async def test_proxy_serves_a_remote_agent_as_agui_and_a2a() -> None:
    """``trpc-bridge proxy`` in-process, a bridge server upstream: through the proxy (A2A
    client, then translator) the AG-UI stream equals the upstream's own ``/agui``."""
    lines: list[str] = []
    options = ServerOptions(port=0, grpc_port=None)
    async with BridgeServer(ShowcaseAgent()) as upstream, httpx.AsyncClient() as client:
        proxy = asyncio.create_task(run_proxy(upstream.base_url, options, lines.append))
        try:
            while not any(line.startswith("card") for line in lines):
                assert not proxy.done(), proxy.exception()
                await asyncio.sleep(0.01)
            urls = {line.split()[0]: line.split()[1] for line in lines}
            card = await client.get(urls["card"])
            proxied = await client.post(urls["AG-UI"], json=run_input("weather?"))
            direct = await client.post(f"{upstream.base_url}/agui", json=run_input("weather?"))
        finally:
            proxy.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await proxy
    assert card.json()["name"] == "showcase"
    check_sequence(sse_events(proxied.text))
    assert comparable(sse_events(proxied.text)) == comparable(sse_events(direct.text))


def comparable(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Generated activity ids replaced; state ops sorted (A2A metadata sorts keys)."""
    ids: dict[str, str] = {}
    out = []
    for event in events:
        event = dict(event)
        if event["type"].startswith("ACTIVITY_"):
            event["messageId"] = ids.setdefault(event["messageId"], f"activity-{len(ids)}")
        elif event["type"] == "STATE_DELTA":
            event["delta"] = sorted(event["delta"], key=lambda op: str(op["path"]))
        out.append(event)
    return out
