"""Five behaviours first seen with the real framework peers, each pinned by a test on
them (the trpc-agent-py client is its a2a-v1 one)."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

import pytest
from framework_fixtures import peer_group
from frameworks import PeerClient, PeerServers
from peers import TRPC_BRIDGE

from trpc_bridge.client import RemoteAgent
from trpc_bridge.events import AgentEvent, AgentRequest

ANSWER = "It is 20°C in Beijing."


def _text_events(answer: dict[str, Any]) -> list[dict[str, Any]]:
    # (the 1.0 wire's closing frame carries one empty text part: no text shown)
    return [e for e in answer["events"] if any(p.get("text") for p in e.get("parts", []))]


def _parts(answer: dict[str, Any], kind: str) -> list[Any]:
    return [p[kind] for e in answer["events"] for p in e.get("parts", []) if kind in p]


@peer_group("trpc-py-v1")
def test_trpc_py_client_gets_a_final_text_its_session_keeps(
    framework_clients: dict[str, PeerClient], bridges: dict[tuple[str, str], str]
) -> None:
    """trpc-agent-py reads a missing ``partial`` key as partial: the bridge's full text
    came as one more partial chunk (shown twice, never stored in the caller's session),
    and the tool response came with an empty response id."""
    answer = framework_clients["trpc-py-v1"].call(bridges["serve", "tool"])
    final = _text_events(answer)[-1]
    assert final["partial"] is False and final["response_id"] == "chatcmpl-tool-2"
    kept = ["".join(p.get("text", "") for p in e["parts"]) for e in answer["session"]]
    assert ANSWER in kept
    responses = [e for e in answer["events"] if _parts({"events": [e]}, "function_response")]
    assert responses and all(e["response_id"] for e in responses)


@peer_group("adk")
def test_adk_client_uses_the_default_card_and_sees_the_structure(
    framework_clients: dict[str, PeerClient], bridges: dict[tuple[str, str], str]
) -> None:
    """ADK's client refused the default card (a bare gRPC ``host:port`` interface url);
    without it, it saw answer text only; with ``--negotiation always`` its genai
    validation emptied trpc's tool parts (``args`` a string, an extra ``type`` key)."""
    client = framework_clients["adk"]
    answer = client.call(bridges["serve", "tool"])
    assert not [e for e in answer["events"] if e.get("error")], answer["events"]
    assert _parts(answer, "function_call") == [
        {"id": "call_001", "name": "get_weather", "args": {"city": "Beijing"}}
    ]
    [response] = _parts(answer, "function_response")
    assert response["response"] == {"city": "Beijing", "temp": "20°C"}
    reasoning = client.call(bridges["serve", "reasoning"])
    assert "".join(_parts(reasoning, "thought")) == "Let me think about it."


def _cli_call(url: str, *extra: str) -> str:
    result = subprocess.run(
        [str(TRPC_BRIDGE), "call", url, "hi", *extra],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return result.stdout


@pytest.mark.parametrize("mode", [(), ("--no-stream",)], ids=["stream", "unary"])
@peer_group("trpc-py")
def test_call_to_trpc_py_server_prints_the_answer_once(
    framework_servers: dict[str, PeerServers], mode: tuple[str, ...]
) -> None:
    """Stream: the answer twice (the last-chunk artifact read as one more delta), after the
    caller's own message echoed back. Unary: the last chunk, then the answer."""
    out = _cli_call(framework_servers["trpc-py"].urls["tool"], *mode)
    assert out.splitlines()[-1] == ANSWER, out
    assert out.count(ANSWER) == 1 and "hi" not in out.splitlines(), out


async def _events(url: str) -> list[AgentEvent]:
    async with await RemoteAgent.connect(url) as agent:
        return [e async for e in agent.run(AgentRequest(text="hi", context_id="c1"))]


@peer_group("adk")
def test_call_to_adk_server_keeps_ids_and_shows_the_answer_once(
    framework_servers: dict[str, PeerServers],
) -> None:
    url = framework_servers["adk"].urls["tool"]
    events = asyncio.run(_events(url))
    answer_ids = {
        e.id
        for e in events
        for c in e.choices
        if (c.delta.content or c.message.content) and not c.message.tool_id
    }
    assert answer_ids == {"chatcmpl-tool-2"}
    assert _cli_call(url).count(ANSWER) == 1


@peer_group("adk")
def test_trpc_py_client_through_proxy_to_adk(
    framework_clients: dict[str, PeerClient],
    framework_servers: dict[str, PeerServers],
    bridges: dict[tuple[str, str], str],
) -> None:
    """The structure came through (8 events against 2 peer to peer) but every id
    differed, the answer showed three times and every text was partial."""
    proxy = bridges["proxy", framework_servers["adk"].urls["tool"]]
    answer = framework_clients["trpc-py-v1"].call(proxy)
    texts = _text_events(answer)
    assert {e["response_id"] for e in texts} == {"chatcmpl-tool-2"}
    assert texts[-1]["partial"] is False
    assert "".join(p["text"] for e in texts if e["partial"] for p in e["parts"]) in ("", ANSWER)
    assert _parts(answer, "function_call") and _parts(answer, "function_response")
