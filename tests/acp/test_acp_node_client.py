"""``trpc-bridge acp`` driven by the TypeScript ACP client library
(``@zed-industries/agent-client-protocol``, pinned in ``tests/acp_node``), whose zod
schemas check every message it receives."""

from __future__ import annotations

import json
import shutil

import pytest
from acp_client import kinds, node_client, node_updates, text_of

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")


async def test_demo_agent_through_the_typescript_client() -> None:
    turns = [{"text": "weather in Paris"}, {"text": "code please"}, {"text": "please fail"}]
    summary = await node_client(["--agent", "demo"], turns)
    assert summary["violations"] == []
    assert summary["initialize"]["protocolVersion"] == 1
    assert summary["initialize"]["agentInfo"]["name"] == "trpc-bridge"
    weather, code, failed = summary["turns"]

    assert weather["stopReason"] == "end_turn"
    updates = node_updates(weather)
    assert {u["sessionId"] for u in updates} == {summary["sessionId"]}
    order = kinds(updates)
    assert (
        order.index("agent_thought_chunk")
        < order.index("tool_call")
        < order.index("tool_call_update")
    )
    assert text_of(updates) == "It is 14°C in Paris."
    call = next(u for u in updates if u["sessionUpdate"] == "tool_call")
    assert call["rawInput"] == {"city": "Paris"} and call["status"] == "in_progress"

    assert code["stopReason"] == "end_turn"
    assert [k for k in kinds(node_updates(code)) if k.startswith("tool")] == [
        "tool_call",
        "tool_call_update",
    ]

    assert failed["error"]["message"] == "the demo agent was asked to fail"
    assert failed["error"]["code"] == -32603
    assert text_of(node_updates(failed)) == "Working on it"


async def test_cancel_through_the_typescript_client() -> None:
    summary = await node_client(
        ["--agent", "trpc_bridge.agents.scenarios:long_slow"],
        [{"text": "hi", "cancelAfterChunks": 3}, {"text": "hi"}],
    )
    assert summary["violations"] == []
    cancelled, again = summary["turns"]
    assert cancelled["stopReason"] == "cancelled"
    assert 3 <= len(cancelled["updates"]) < 1000
    ends = [json.loads(line) for line in summary["stderr"].splitlines() if '"run_end"' in line]
    assert ends[0]["canceled"] is True
    # The next turn of the same session runs to its end.
    assert again["stopReason"] == "end_turn" and len(again["updates"]) == 1000
