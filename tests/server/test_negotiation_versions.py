"""Negotiation by ``interaction_spec_version`` on the raw 0.3 wire: a supported version
(ours or a newer minor) gets the trpc encoding; no version, an unknown major or a
non-string gets plain A2A (the answer text only) — never an error."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from trpc_bridge.server import BridgeServer

from .helpers import GO_HEADERS, go_message, jsonrpc, sse_results


def _message(version: Any) -> dict[str, Any]:
    message = go_message("What is the weather in Beijing?")
    if version is None:
        del message["metadata"]["interaction_spec_version"]
    else:
        message["metadata"]["interaction_spec_version"] = version
    return message


async def _frames(server: BridgeServer, version: Any) -> list[dict[str, Any]]:
    body = jsonrpc("message/stream", {"message": _message(version)})
    async with (
        httpx.AsyncClient(timeout=None) as http,
        http.stream("POST", server.jsonrpc_url, json=body, headers=GO_HEADERS) as response,
    ):
        assert response.status_code == 200
        return [frame async for frame in sse_results(response)]


def _part_kinds(frames: list[dict[str, Any]]) -> set[str]:
    return {
        part["kind"]
        for frame in frames
        if frame.get("kind") == "artifact-update"
        for part in frame["artifact"].get("parts") or []
    }


@pytest.mark.parametrize(
    ("version", "trpc"),
    [("0.1", True), ("0.7", True), (None, False), ("9.0", False), ("", False), (3, False)],
)
async def test_versions(demo_server: BridgeServer, version: Any, trpc: bool) -> None:
    frames = await _frames(demo_server, version)
    assert frames[-1]["status"]["state"] == "completed"
    text = "".join(
        part.get("text", "")
        for frame in frames
        if frame.get("kind") == "artifact-update"
        for part in frame["artifact"].get("parts") or []
        if not (part.get("metadata") or {}).get("thought")
    )
    assert "Beijing" in text
    if trpc:
        assert "data" in _part_kinds(frames)  # the tool call and its result
    else:
        assert _part_kinds(frames) == {"text"}
