"""``trpc-bridge proxy`` in front of trpc-agent-go, seen by trpc-agent-go's own client.

A caller of the proxy that speaks what the Go server speaks (A2A 0.3 JSON-RPC, trpc's
encoding: ``gopeer call`` sends ``interaction_spec_version``) gets its text deltas
relayed (``docs/specs/trpc-interaction.md`` §11.8): ``gopeer call`` through the proxy
must print exactly what it prints against ``gopeer serve`` directly, ids normalised. What the
proxy adds must keep working on a relayed run: the caller's identity reaches the Go
server, cancelling stops the Go run, and the task is the proxy's (``tasks/get``,
``tasks/resubscribe``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from peers import Process, bridge_proxy, go_call, go_server, normalise

from trpc_bridge.agents.scenarios import SCRIPTS
from trpc_bridge.client import RemoteAgent
from trpc_bridge.codecs.trpc.keys import INTERACTION_SPEC_VERSION
from trpc_bridge.events import AgentRequest

SCENARIOS = sorted(SCRIPTS)


@pytest.fixture(scope="module")
def proxied(gopeer: Path) -> Iterator[dict[str, tuple[Process, Process]]]:
    """Per scenario, started on first use: the Go server and a proxy in front of it."""
    with contextlib.ExitStack() as stack:

        class Lazy(dict[str, tuple[Process, Process]]):
            def __missing__(self, scenario: str) -> tuple[Process, Process]:
                go = stack.enter_context(go_server(scenario))
                proxy = stack.enter_context(bridge_proxy(go.url, grpc=False))
                self[scenario] = (go, proxy)
                return go, proxy

        yield Lazy()


@pytest.mark.parametrize("mode", ["stream", "unary"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_go_client_through_the_proxy(
    proxied: dict[str, tuple[Process, Process]], scenario: str, mode: str
) -> None:
    go, proxy = proxied[scenario]
    direct = go_call(go.url, "hi", stream=mode == "stream")
    through = go_call(proxy.url, "hi", stream=mode == "stream")
    assert direct.returncode == 0, direct.logs
    assert through.returncode == 0, through.logs
    assert normalise(through.events) == normalise(direct.events)


def test_the_callers_identity_reaches_the_go_server(
    proxied: dict[str, tuple[Process, Process]],
) -> None:
    go, proxy = proxied["text"]
    assert go_call(proxy.url, "hi", stream=True, user="carol").returncode == 0
    go.wait_for_log(lambda line: line.get("log") == "request" and line.get("x_user_id") == "carol")


def test_a_cancel_through_the_proxy_stops_the_go_run(gopeer: Path) -> None:
    with (
        go_server("long", chunk_delay="5ms") as go,
        bridge_proxy(go.url, grpc=False) as proxy,
    ):
        result = go_call(proxy.url, "hi", stream=True, cancel_after=10)
        assert len(result.events) < 1000
        end = go.wait_for_log(lambda line: line.get("log") == "run_end", timeout=15)
        assert end["canceled"] is True


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def _stream_then_get(url: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    message = {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
        "metadata": {"interaction_spec_version": INTERACTION_SPEC_VERSION},
    }
    results = []
    async with httpx.AsyncClient(timeout=30) as http:
        body = _rpc("message/stream", {"message": message})
        async with http.stream("POST", url, json=body) as response:
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    results.append(json.loads(line[5:])["result"])
        task_id = results[0]["taskId"]
        got = (await http.post(url, json=_rpc("tasks/get", {"id": task_id}))).json()
    return results, got["result"]


def test_a_relayed_run_is_the_proxys_task(proxied: dict[str, tuple[Process, Process]]) -> None:
    _, proxy = proxied["text"]
    results, task = asyncio.run(_stream_then_get(proxy.url))
    assert {r["taskId"] for r in results} == {task["id"]}
    assert results[-1]["status"]["state"] == "completed" == task["status"]["state"]
    texts = [p.get("text") for a in task["artifacts"] for p in a["parts"]]
    assert "Hello from trpc." in texts


async def _follow(url: str) -> list[str]:
    agent = await RemoteAgent.connect(url, stream=True)
    try:
        request = AgentRequest(text="hi", user_id="u", context_id="s")
        task_id = await agent.start(request)
        events = [e async for e in agent.follow(task_id, request=request)]
        return [c.delta.content for e in events for c in e.choices if e.is_partial]
    finally:
        await agent.aclose()


def test_a_relayed_run_can_be_followed(gopeer: Path) -> None:
    """``return_immediately`` then ``tasks/resubscribe`` on the proxy: the rest of the run."""
    with go_server("long", chunk_delay="2ms") as go, bridge_proxy(go.url, grpc=False) as proxy:
        pieces = asyncio.run(_follow(proxy.url))
    assert pieces and pieces[-1] == "t999 "
