"""200 concurrent streams across JSON-RPC, REST and gRPC against one ``trpc-bridge serve``
process, each with its own content: every caller gets exactly its own text, complete and
in order (no cross-talk), and the server's resident memory is reported."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from load_agents import expected_echo
from server_process import ServerProcess, served

from trpc_bridge.client import RemoteAgent
from trpc_bridge.events import AgentRequest

STREAMS = 200
TRANSPORTS = ("jsonrpc", "rest", "grpc")


@pytest.fixture
async def echo_server() -> AsyncIterator[ServerProcess]:
    async with served("load_agents:echo", "--max-connections", "1000") as server:
        yield server


async def _one(agent: RemoteAgent, text: str) -> str:
    events = [e async for e in agent.run(AgentRequest(text=text, context_id=f"ctx-{text}"))]
    assert not any(e.is_terminal_error() for e in events), events[-1]
    return "".join(c.delta.content for e in events for c in e.choices if e.is_partial)


async def test_200_streams_no_cross_talk(
    echo_server: ServerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = [f"caller{i}-{uuid.uuid4().hex[:8]}" for i in range(STREAMS)]
    agents = [
        await RemoteAgent.connect(echo_server.url, transport=transport, stream=True)
        for transport in TRANSPORTS
    ]
    before = echo_server.rss_kib()
    try:
        results = await asyncio.gather(
            *(_one(agents[i % len(agents)], text) for i, text in enumerate(texts))
        )
    finally:
        for agent in agents:
            await agent.aclose()
    after = echo_server.rss_kib()
    assert results == [expected_echo(text) for text in texts]
    with capsys.disabled():
        print(
            f"\n{STREAMS} concurrent streams ({', '.join(TRANSPORTS)}): server RSS "
            f"{before // 1024} MiB before, {after // 1024} MiB after"
        )
    async with httpx.AsyncClient(timeout=30) as http:  # still serving
        assert (await http.get(f"{echo_server.url}/.well-known/agent-card.json")).status_code == 200
