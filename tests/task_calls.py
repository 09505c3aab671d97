"""A2A task calls as raw JSON-RPC 0.3 over HTTP, for tests against server processes
(durable tasks, replicas): a stream read frame by frame, get, cancel, resubscribe."""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx


def _body(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}


def message(text: str) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": f"msg-{uuid.uuid4()}",
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
        "metadata": {"interaction_spec_version": "0.1"},
    }


def delta_pieces(frames: list[dict[str, Any]]) -> list[str]:
    """The text deltas of the ``long`` scenario (``t0 ``, ``t1 ``, …) among ``frames``,
    in order; the final full-text artifact is not one."""
    texts = [
        part.get("text", "")
        for frame in frames
        if frame.get("kind") == "artifact-update"
        for part in frame["artifact"]["parts"]
    ]
    return [t for t in texts if re.fullmatch(r"t\d+ ", t)]


def task_pieces(task: dict[str, Any]) -> list[str]:
    """The deltas a task snapshot's artifacts hold so far (``long`` scenario)."""
    texts = [p.get("text", "") for a in task.get("artifacts", []) for p in a["parts"]]
    return [piece + " " for piece in "".join(texts).split()]


def final_state(frames: list[dict[str, Any]]) -> str:
    states = [f["status"]["state"] for f in frames if f.get("kind") == "status-update"]
    return states[-1] if states else ""


def status_text(task_or_frame: dict[str, Any]) -> str:
    parts = task_or_frame.get("status", {}).get("message", {}).get("parts", [])
    return " ".join(p.get("text", "") for p in parts)


class TaskCalls:
    """One caller (``X-User-ID``) of one server URL."""

    def __init__(self, url: str, user: str = "alice") -> None:
        self.url = url
        self.http = httpx.AsyncClient(timeout=60, headers={"X-User-ID": user})

    async def close(self) -> None:
        await self.http.aclose()

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        response = await self.http.post(self.url, json=_body(method, params))
        envelope: dict[str, Any] = response.json()
        return envelope

    async def get(self, task_id: str) -> dict[str, Any]:
        return await self.call("tasks/get", {"id": task_id})

    async def cancel(self, task_id: str) -> dict[str, Any]:
        return await self.call("tasks/cancel", {"id": task_id})

    @contextlib.asynccontextmanager
    async def frames(
        self, method: str, params: dict[str, Any]
    ) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """The SSE frames (``result`` objects, or the ``error`` envelope) of a stream."""
        async with self.http.stream("POST", self.url, json=_body(method, params)) as response:

            async def read() -> AsyncIterator[dict[str, Any]]:
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        envelope = json.loads(line[5:])
                        yield envelope.get("result", envelope)

            yield read()

    def stream(self, text: str) -> Any:
        return self.frames("message/stream", {"message": message(text)})

    def resubscribe(self, task_id: str) -> Any:
        return self.frames("tasks/resubscribe", {"id": task_id})
