"""A real trpc-agent-go client (``gopeer call``) reaches a tfrs-speaking agent that is not a
trpc agent (``tfrs_peer``, a2a-sdk alone) through the bridge as a proxy: the peer's
progress arrives as trpc reasoning and tool events, the answer as the final text."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from peers import go_call
from tfrs_peer import ANSWER, tfrs_peer

from trpc_bridge.client import RemoteAgent
from trpc_bridge.server import BridgeServer


@pytest.mark.cell("tfrs progress via proxy", "go→py")
async def test_go_caller_sees_the_peer_progress(gopeer: Path) -> None:
    async with (
        tfrs_peer() as peer,
        await RemoteAgent.connect(peer.base_url) as remote,
        BridgeServer(remote) as proxy,
    ):
        result = await asyncio.to_thread(go_call, proxy.base_url, "weather?", stream=True)
    assert result.returncode == 0, result.logs
    choices = [c for e in result.events for c in e.get("choices", [])]
    reasoning = "".join(c.get("delta", {}).get("reasoning_content", "") for c in choices)
    assert reasoning.startswith("The user asks about the weather.")
    calls = [
        t["function"]["name"] for c in choices for t in c.get("message", {}).get("tool_calls", [])
    ]
    assert calls == ["get_weather"]
    assert any(c.get("message", {}).get("tool_id") == "call-1" for c in choices)
    texts = [
        c.get("delta", {}).get("content") or c.get("message", {}).get("content") for c in choices
    ]
    assert [t for t in texts if t][-1] == ANSWER
