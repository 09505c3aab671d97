"""``trpc-bridge acp --upstream`` in front of trpc-agent-go (``gopeer serve``), driven by
real ACP clients: the Python ``agent-client-protocol`` client and the TypeScript
``@zed-industries/agent-client-protocol`` one.

Each scenario's ACP updates must be exactly what the bridge sends for the scenario's
Python twin (``trpc_bridge.agents.scenarios``) put through the same E2A → ACP projection, message
ids numbered in order of appearance: what an editor shows is the same whether the agent
is the Go one behind A2A or its Python twin.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block
from acp_client import acp_door, node_client, node_updates
from peers import go_server

from trpc_bridge.agents.scenarios import SCRIPTS
from trpc_bridge.codecs.e2a import (
    E2AEnvelope,
    E2AEventEncoder,
    ResponseSequencer,
    e2a_response_to_acp_jsonrpc_response,
    e2a_response_to_acp_notification,
)
from trpc_bridge.events import AgentRequest

SCENARIOS = sorted(set(SCRIPTS) - {"long"})
NODE_SCENARIOS = ("code", "error", "tool")


def _expected(scenario: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ACP updates and prompt answer the twin's events project to."""
    encoder = E2AEventEncoder(
        ResponseSequencer(E2AEnvelope(request_id="q", session_id="s", jsonrpc_id=1))
    )
    records = [r for e in SCRIPTS[scenario](AgentRequest(text="hi")) for r in encoder.encode(e)]
    records += encoder.close()
    updates = []
    for record in records:
        notification = e2a_response_to_acp_notification(record)
        if notification is not None:
            updates.append({"sessionId": "s", **notification["params"]["update"]})
    answer = e2a_response_to_acp_jsonrpc_response(records[-1])
    assert answer is not None
    return updates, answer


def _normalised(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Session and message ids replaced by their order of first appearance."""
    ids: dict[str, str] = {}
    out = []
    for update in updates:
        update = dict(update, sessionId="<session>")
        if "messageId" in update:
            update["messageId"] = ids.setdefault(update["messageId"], f"<message{len(ids)}>")
        out.append(update)
    return out


async def _python_turn(url: str, *extra: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    async with acp_door("--upstream", url, *extra) as door:
        session = await door.new_session()
        try:
            answer = await door.conn.prompt(session_id=session, prompt=[text_block("hi")])
            outcome: dict[str, Any] = {"result": {"stopReason": answer.stop_reason}}
        except RequestError as exc:
            outcome = {"error": {"code": exc.code, "message": str(exc)}}
        return door.client.take(), outcome


def _outcome_view(answer: dict[str, Any]) -> dict[str, Any]:
    if "error" in answer:
        return {"error": {"code": answer["error"]["code"], "message": answer["error"]["message"]}}
    return {"result": {"stopReason": answer["result"]["stopReason"]}}


@pytest.mark.parametrize(
    "scenario",
    [pytest.param(s, marks=pytest.mark.cell(s, "ACP python client → acp → go")) for s in SCENARIOS],
)
def test_python_acp_client_sees_what_the_twin_shows(gopeer: Path, scenario: str) -> None:
    expected_updates, expected_answer = _expected(scenario)
    with go_server(scenario) as go:
        updates, outcome = asyncio.run(_python_turn(go.url))
    assert _normalised(updates) == _normalised(expected_updates)
    assert outcome == _outcome_view(expected_answer)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(s, marks=pytest.mark.cell(s, "ACP typescript client → acp → go"))
        for s in NODE_SCENARIOS
    ],
)
def test_typescript_acp_client_sees_what_the_twin_shows(gopeer: Path, scenario: str) -> None:
    expected_updates, expected_answer = _expected(scenario)
    with go_server(scenario) as go:
        summary = asyncio.run(node_client(["--upstream", go.url], [{"text": "hi"}]))
    assert summary["violations"] == []
    (turn,) = summary["turns"]
    # The 0.4.5 schema predates ContentChunk.messageId; its zod parsing drops the key.
    expected_updates = [{k: v for k, v in u.items() if k != "messageId"} for u in expected_updates]
    assert _normalised(node_updates(turn)) == _normalised(expected_updates)
    if "error" in expected_answer:
        assert turn["error"]["code"] == expected_answer["error"]["code"]
        assert turn["error"]["message"] == expected_answer["error"]["message"]
    else:
        assert turn["stopReason"] == expected_answer["result"]["stopReason"]


@pytest.mark.cell("X-User-ID", "ACP → acp → go")
def test_acp_user_reaches_the_go_agent(gopeer: Path) -> None:
    with go_server("text") as go:
        asyncio.run(_python_turn(go.url, "--user", "bob"))
        go.wait_for_log(
            lambda line: line.get("log") == "request" and line.get("x_user_id") == "bob"
        )


@pytest.mark.cell("cancel", "ACP → acp → go")
def test_acp_cancel_stops_the_go_run(gopeer: Path) -> None:
    async def cancel_midway(url: str) -> str:
        async with acp_door("--upstream", url) as door:
            session = await door.new_session()
            prompt = asyncio.create_task(
                door.conn.prompt(session_id=session, prompt=[text_block("hi")])
            )
            await door.first_text_chunk()
            await door.conn.cancel(session_id=session)
            answer = await asyncio.wait_for(prompt, timeout=30)
            return str(answer.stop_reason)

    with go_server("long", chunk_delay="5ms") as go:
        assert asyncio.run(cancel_midway(go.url)) == "cancelled"
        end = go.wait_for_log(lambda line: line.get("log") == "run_end", timeout=15)
        assert end["canceled"] is True
