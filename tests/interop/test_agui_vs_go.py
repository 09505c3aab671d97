"""AG-UI differential: the bridge's ``/agui`` against trpc-agent-go's own AG-UI server.

``gopeer agui`` is trpc-agent-go's AG-UI server (``server/agui`` + ``a2aagent``) in front
of an A2A upstream. Two set-ups per scenario:

* upstream = the Go peer's A2A server (``gopeer serve``); the bridge side is
  ``trpc-bridge proxy`` in front of the same upstream: both AG-UI servers read the same
  A2A stream through their own A2A client;
* upstream = ``trpc-bridge serve`` of the scenario agent, whose own ``/agui`` translates
  the agent's events directly.

The same ``RunAgentInput`` goes to both sides; after removing what is different by design
(see ``codecs/agui/translator.py``: protocol 1.0 fields, ``reasoning-`` ids, per-result message ids,
code activities, state deltas), the two event sequences must be equal.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from agui_checks import run_input
from peers import bridge_proxy, bridge_server, go_server, stop

SCENARIOS = [
    "text",
    "reasoning",
    "tool",
    "parallel_tools",
    "code",
    "error",
    "state_delta",
    "unicode",
]
#: What only the bridge translates (trpc-agent-go's default translator ignores these).
BRIDGE_ONLY = {"ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA", "STATE_DELTA"}


@contextlib.contextmanager
def go_agui(gopeer: Path, upstream: str) -> Iterator[str]:
    cmd = [str(gopeer), "agui", "--upstream", upstream, "--addr", "127.0.0.1:0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline().split()  # "READY http://ADDR/agui"
        assert ready[:1] == ["READY"], f"gopeer agui did not start (exit {proc.poll()})"
        yield ready[1]
    finally:
        stop(proc)


def run_sse(url: str) -> list[dict[str, Any]]:
    body = run_input(
        "What is the weather in Beijing?", thread="thread-1", run="run-1", message="u1"
    )
    response = httpx.post(url, json=body, timeout=60)
    assert response.status_code == 200, response.text
    return [
        json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")
    ]


def comparable(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for event in events:
        if event["type"] in BRIDGE_ONLY:
            continue
        event = {k: v for k, v in event.items() if k not in ("timestamp", "protocolVersion")}
        if event["type"] == "RUN_FINISHED":
            event.pop("outcome", None)
        elif event["type"] == "RUN_ERROR":
            event = {"type": "RUN_ERROR", "message": event["message"]}
        elif event["type"] == "TOOL_CALL_RESULT":
            event.pop("messageId")
        elif event["type"].startswith("REASONING_"):
            event["messageId"] = event["messageId"].removeprefix("reasoning-")
        out.append(event)
    return out


@pytest.mark.parametrize(
    "scenario", [pytest.param(s, marks=pytest.mark.cell(s, "agui proxy=go")) for s in SCENARIOS]
)
def test_proxy_agui_matches_trpc_agent_go(gopeer: Path, scenario: str) -> None:
    with go_server(scenario) as upstream:
        with go_agui(gopeer, upstream.url) as go_url:
            go = run_sse(go_url)
        with bridge_proxy(upstream.url, grpc=False) as proxy:
            ours = run_sse(f"{proxy.url}agui")
    assert comparable(ours) == comparable(go)


@pytest.mark.parametrize(
    "scenario", [pytest.param(s, marks=pytest.mark.cell(s, "agui py=go")) for s in SCENARIOS]
)
def test_bridge_agui_matches_trpc_agent_go(gopeer: Path, scenario: str) -> None:
    with bridge_server(f"trpc_bridge.agents.scenarios:{scenario}") as bridge:
        with go_agui(gopeer, bridge.url) as go_url:
            go = run_sse(go_url)
        ours = run_sse(f"{bridge.url}agui")
    assert comparable(ours) == comparable(go)
    results = [e["messageId"] for e in ours if e["type"] == "TOOL_CALL_RESULT"]
    assert len(results) == len(set(results)), "each tool result has its own message id"
