"""An agent whose thinking (streamed in deltas that split the key) and error hold an API
key, served by the bridge with a durable (SQLite) task store: the key reaches neither the
wire (tfrs envelopes, their text fallback, trpc's reasoning parts, the 1.0 and 0.3
streams), nor ``Task.history`` (``tasks/get``), nor the store's database file, nor the
spans. A token in its progress text (the text of a response that calls a tool) is masked
in the tfrs envelopes and their fallback; the agent's own text is carried as it gave it."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from span_capture import in_memory_tracing

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.names import ANONYMOUS
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.options import Durability
from trpc_bridge.server.tasks.store import owner_context

KEY = "sk-proj-AbCdEfGhIjKlMnOp1234"
TOKEN = "ghp_" + "q7W3" * 9
THINKING = f"The user pasted {KEY}; I will check it with the lookup tool."
ANSWER = "Done: the key works."


async def leaky(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    # Deltas cut inside the key, as a model's tokens would.
    cut = THINKING.index(KEY) + 5
    for piece in (THINKING[:cut], THINKING[cut : cut + 7], THINKING[cut + 7 :]):
        yield AgentEvent.reasoning_delta(piece, "r1")
    tool = AgentEvent.tool_call("lookup", "{}", call_id="c1", response_id="r1", reasoning=THINKING)
    tool.choices[0].message.content = f"Checking with token {TOKEN} first."  # progress text
    yield tool
    yield AgentEvent.tool_result("c1", "lookup", "ok")
    if "fail" in request.text:
        yield AgentEvent.failure(f"lookup refused {KEY}")
        return
    yield AgentEvent.final_text(ANSWER, "r2")


def _stream_request(text: str, *, version: str) -> tuple[dict[str, Any], dict[str, str]]:
    message: dict[str, Any] = {
        "messageId": f"m-{uuid.uuid4()}",
        "role": "ROLE_USER" if version == "1.0" else "user",
        "parts": [{"text": text}] if version == "1.0" else [{"kind": "text", "text": text}],
        # trpc's encoding (reasoning parts) and tfrs progress, both asked for.
        "metadata": {"interaction_spec_version": "0.1", "tfrs_progress": True},
    }
    method = "SendStreamingMessage" if version == "1.0" else "message/stream"
    headers = {"A2A-Version": "1.0"} if version == "1.0" else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}
    return body, headers


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_keys_in_thinking_progress_and_errors_never_leave(
    tmp_path: Path, version: str
) -> None:
    db = tmp_path / "tasks.db"
    tracing = in_memory_tracing()
    options = ServerOptions(
        grpc_port=None,
        tracer_provider=tracing.provider,
        durability=Durability(task_store=f"sqlite:///{db}"),
    )
    agent = FunctionAgent("leaky", "thinks out loud", leaky)
    async with BridgeServer(agent, options) as server, httpx.AsyncClient(timeout=30) as http:
        seen: list[str] = []
        task_ids = []
        for text in ("check my key", "check and fail"):
            body, headers = _stream_request(text, version=version)
            async with http.stream("POST", server.jsonrpc_url, json=body, headers=headers) as r:
                wire = (await r.aread()).decode()
            seen.append(wire)
            progress = _progress_parts(wire)
            assert any("Checking with token [redacted]" in p for p in progress)
            assert not any(TOKEN in p for p in progress)
            task_ids.append(re.findall(r'"taskId":\s*"([^"]+)"', wire)[0])
            assert "[redacted]" in wire  # masked, not dropped: the thinking still shows
            assert "tfrs" in wire
        assert ANSWER in seen[0]  # the answer is the agent's own output, kept

        for task_id in task_ids:
            method = "GetTask" if version == "1.0" else "tasks/get"
            params = {"id": task_id, "historyLength": 100}
            body = {"jsonrpc": "2.0", "id": 2, "method": method, "params": params}
            _, headers = _stream_request("", version=version)
            answer = await http.post(server.jsonrpc_url, json=body, headers=headers)
            assert "result" in answer.json(), answer.text
            seen.append(answer.text)
            stored = await server.task_store.get(task_id, owner_context(ANONYMOUS))
            assert stored is not None
            seen.append(str(stored))
    seen.append(db.read_bytes().decode("utf-8", "replace"))
    spans = await tracing.wait_for(lambda s: len(s) >= 2)
    seen += [json.dumps(dict(s.attributes or {})) + str(s.status.description) for s in spans]
    for where in seen:
        assert KEY not in where and KEY[:12] not in where


def _progress_parts(wire: str) -> list[str]:
    """The tfrs envelopes and their text fallbacks in an SSE body (either wire version)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            metadata = value.get("metadata")
            if isinstance(metadata, dict) and "tfrs" in metadata:
                found.extend([str(metadata["tfrs"]), str(value.get("text", ""))])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for line in wire.splitlines():
        if line.startswith("data:"):
            walk(json.loads(line[5:]))
    return found
