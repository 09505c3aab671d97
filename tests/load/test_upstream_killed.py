"""An upstream that dies mid-stream under ``proxy``: the downstream caller's stream ends
with a clean failed task (a final ``failed`` status with a ``run_error`` that says what
happened in words, not Python's repr of an httpx exception), not a hang or a cut
connection; the task reads ``failed`` afterwards and the proxy keeps serving."""

from __future__ import annotations

import json
from typing import Any

import httpx
from server_process import served

from trpc_bridge.client import RemoteAgent
from trpc_bridge.server import BridgeServer, ServerOptions


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


MESSAGE = {
    "kind": "message",
    "messageId": "m-1",
    "role": "user",
    "parts": [{"kind": "text", "text": "go"}],
    "metadata": {"interaction_spec_version": "0.1"},
}


async def test_upstream_killed_mid_stream_fails_the_task_cleanly() -> None:
    async with (
        served("trpc_bridge.agents.scenarios:long_slow") as upstream,
        await RemoteAgent.connect(upstream.url) as remote,
        BridgeServer(remote, ServerOptions(grpc_port=None)) as proxy,
        httpx.AsyncClient(timeout=60) as http,
    ):
        frames: list[dict[str, Any]] = []
        body = _rpc("message/stream", {"message": MESSAGE})
        async with http.stream("POST", proxy.jsonrpc_url, json=body) as response:
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                frames.append(json.loads(line[5:])["result"])
                if len(frames) == 5:
                    upstream.kill()
        last = frames[-1]
        assert 5 <= len(frames) < 1000  # cut short: the upstream's 1,000 chunks never came
        assert last["kind"] == "status-update" and last["final"] is True
        assert last["status"]["state"] == "failed"
        assert last["metadata"]["error_type"] == "run_error"
        said = last["metadata"]["error_message"]
        assert said.endswith("broke: the connection closed before the answer was complete")
        assert "Error(" not in said  # no Python repr reaches the caller
        stored = await http.post(proxy.jsonrpc_url, json=_rpc("tasks/get", {"id": last["taskId"]}))
        assert stored.json()["result"]["status"]["state"] == "failed"
        card = await http.get(proxy.card_url)
        assert card.status_code == 200
