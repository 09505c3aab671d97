"""RemoteAgent against the bridge's own server (a real BridgeServer on loopback), on every
transport: each demo prompt decodes to events content-equal to what the demo agent
yields in process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.client import RemoteAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.message_aggregate import AggregatedMessage, aggregate
from trpc_bridge.server import BridgeServer, ServerOptions

PROMPTS = ["What is the weather in Paris?", "run some code", "please fail"]
#: (transport, A2A version) pairs a bridge server offers.
WIRES = [("jsonrpc", "0.3"), ("jsonrpc", "1.0"), ("rest", "1.0"), ("grpc", "1.0")]


def _content(message: AggregatedMessage) -> dict[str, Any]:
    """What a message says, without the ids that differ from run to run."""
    error = message.error
    return {
        "role": message.role,
        "text": message.text,
        "reasoning": message.reasoning,
        "calls": [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls],
        "results": [(r.call_id, r.name, r.content) for r in message.tool_results],
        "code": message.code,
        "code_results": message.code_results,
        "error": None if error is None else (error.type, error.message, error.code),
    }


async def _local(prompt: str) -> list[AgentEvent]:
    return [e async for e in demo_agent().run(AgentRequest(text=prompt))]


@pytest.fixture
async def server() -> AsyncIterator[BridgeServer]:
    bridge = BridgeServer(demo_agent(), ServerOptions())
    await bridge.start()
    try:
        yield bridge
    finally:
        await bridge.stop()


@pytest.mark.parametrize(("transport", "version"), WIRES, ids=[f"{t}-{v}" for t, v in WIRES])
async def test_streamed_demo_runs_match_the_agent_in_process(
    server: BridgeServer, transport: str, version: str
) -> None:
    async with await RemoteAgent.connect(
        server.base_url, transport=transport, version=version
    ) as agent:
        assert agent.endpoint.version == version
        assert agent.trpc_dialect
        for prompt in PROMPTS:
            request = AgentRequest(text=prompt, user_id="u1", context_id=f"ctx-{transport}")
            remote = [e async for e in agent.run(request, stream=True)]
            local = await _local(prompt)
            assert [_content(m) for m in aggregate(remote)] == [
                _content(m) for m in aggregate(local)
            ], prompt


@pytest.mark.parametrize(("transport", "version"), WIRES, ids=[f"{t}-{v}" for t, v in WIRES])
async def test_unary_demo_runs_keep_answer_tools_and_errors(
    server: BridgeServer, transport: str, version: str
) -> None:
    async with await RemoteAgent.connect(
        server.base_url, transport=transport, version=version, stream=False
    ) as agent:
        for prompt in PROMPTS:
            remote = [e async for e in agent.run(AgentRequest(text=prompt))]
            local = await _local(prompt)
            # A unary result holds complete messages only: what the agent streamed as
            # deltas alone (its reasoning, text before a failure) is not part of it.
            complete = [e for e in local if not e.is_partial]
            want = [_content(m) for m in aggregate(complete)]
            assert [_content(m) for m in aggregate(remote)] == want, prompt
            assert remote[-1].done
