"""Plain A2A semantics for servers outside trpc's dialect, against
small a2a-sdk servers (``plain_servers.py``): the answer shows once, under one id, and a
unary call waits for a task that is still working."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest, StreamResponse
from google.protobuf.json_format import MessageToDict
from plain_servers import (
    ANSWER,
    PIECES,
    ReplacingExecutor,
    SlowExecutor,
    StatusThenArtifactExecutor,
    serve,
    sse,
    status_first_frames,
)
from replay_server import ReplayPeer, serving

from trpc_bridge.cli.call import run_call
from trpc_bridge.client import RemoteAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.message_aggregate import aggregate
from trpc_bridge.server import BridgeServer, ServerOptions


async def _run(url: str, *, stream: bool = True) -> list[AgentEvent]:
    async with await RemoteAgent.connect(url, stream=stream) as agent:
        return [e async for e in agent.run(AgentRequest(text="hi", context_id="c1"))]


def _texts(events: list[AgentEvent]) -> list[str]:
    return [m.text for m in aggregate(events) if m.text]


async def test_append_false_on_a_seen_artifact_replaces_its_text() -> None:
    async with serve(ReplacingExecutor()) as url:
        assert _texts(await _run(url)) == [ANSWER]


def _fold_artifacts(frames: list[dict[str, Any]]) -> dict[str, str]:
    """A2A's own rule for a client that keeps artifacts: ``append`` adds, else replaces."""
    artifacts: dict[str, str] = {}
    for frame in frames:
        update = frame.get("artifactUpdate")
        if not update:
            continue
        artifact = update["artifact"]
        text = "".join(p.get("text", "") for p in artifact.get("parts", []))
        key = artifact.get("artifactId", "")
        artifacts[key] = artifacts.get(key, "") + text if update.get("append") else text
    return artifacts


async def test_proxy_forwards_a_replacement_as_a_replacement() -> None:
    """An a2a-sdk client of ``trpc-bridge proxy`` in front of the replacing server keeps
    the answer once: the proxy forwards the replacement as a replacement, not as
    ``append: true``."""
    async with (
        serve(ReplacingExecutor()) as upstream,
        await RemoteAgent.connect(upstream) as remote,
        BridgeServer(remote, ServerOptions()) as proxy,
        httpx.AsyncClient() as http,
    ):
        card = await A2ACardResolver(http, proxy.base_url).get_agent_card()
        config = ClientConfig(
            httpx_client=http, streaming=True, supported_protocol_bindings=["JSONRPC"]
        )
        client = ClientFactory(config).create(card)
        request = SendMessageRequest(message=new_text_message("hi", role=Role.ROLE_USER))
        frames = [
            MessageToDict(response)
            async for response in client.send_message(request)
            if isinstance(response, StreamResponse)
        ]
        await client.close()
    texts = [t for t in _fold_artifacts(frames).values() if t]
    assert texts == [ANSWER]


async def test_status_message_text_then_the_same_artifact_is_one_answer() -> None:
    """Each status message keeps its own id; the artifact that repeats them is a copy."""
    async with serve(StatusThenArtifactExecutor()) as url:
        events = await _run(url)
    assert _texts(events) == list(PIECES)
    assert [e.id for e in events if e.choices] == [f"status-{p}" for p in PIECES]


async def test_unary_call_follows_a_task_that_is_still_working() -> None:
    async with serve(SlowExecutor(), non_blocking=True) as url:
        assert _texts(await _run(url, stream=False)) == [ANSWER]


async def test_call_no_stream_prints_the_answer_of_a_working_task(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``trpc-bridge call --no-stream`` follows a task still working until it ends and
    prints its answer (not nothing, with exit status 0)."""
    async with serve(SlowExecutor(), non_blocking=True) as url:
        assert await run_call(url, "hi", stream=False) == 0
    assert ANSWER in capsys.readouterr().out


async def test_stream_may_begin_with_a_status_update() -> None:
    peer = ReplayPeer(stream_chunks=sse(status_first_frames()))
    async with serving(peer) as url:
        events = await _run(url)
    assert _texts(events) == [ANSWER]
    assert not [e for e in events if e.error is not None]
