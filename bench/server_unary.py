"""Unary: requests/s of the bridge vs a plain a2a-sdk server, both answering a 0.3
``message/send`` with one agent ``Message`` (uvicorn, loopback, sequential raw httpx
calls in the same process). Prints both rates and the bridge's overhead (target ≤ 10 %).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import Message, Part, Role

sys.path.insert(0, str(Path(__file__).parent))
from _loopback import message_body, sdk_server

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions

WARMUP, CALLS, ROUNDS = 50, 400, 3
ANSWER = "It is 20°C in Beijing."


async def bridge_answer(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    yield AgentEvent.final_text(ANSWER, "chatcmpl-bench")


class AnswerExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await event_queue.enqueue_event(
            Message(
                message_id="msg-bench",
                context_id=context.context_id or "",
                role=Role.ROLE_AGENT,
                parts=[Part(text=ANSWER)],
            )
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def rate(http: httpx.AsyncClient, url: str) -> float:
    for i in range(WARMUP):
        (await http.post(url, json=message_body("message/send", "hi", i))).raise_for_status()
    start = time.perf_counter()
    for i in range(CALLS):
        response = await http.post(url, json=message_body("message/send", "hi", i))
        assert response.json()["result"]["parts"][0]["text"] == ANSWER
    return CALLS / (time.perf_counter() - start)


async def main() -> None:
    agent = FunctionAgent(name="bench", description="one answer", fn=bridge_answer)
    ours: list[float] = []
    theirs: list[float] = []
    async with (
        BridgeServer(agent, ServerOptions(grpc_port=None)) as bridge,
        sdk_server(AnswerExecutor()) as sdk_url,
        httpx.AsyncClient(timeout=None) as http,
    ):
        for _ in range(ROUNDS):  # interleaved, so drift affects both alike
            ours.append(await rate(http, bridge.jsonrpc_url))
            theirs.append(await rate(http, sdk_url))
    best_ours, best_theirs = max(ours), max(theirs)
    print(f"bridge   message/send → Message: {best_ours:7.0f} req/s (best of {ROUNDS} x {CALLS})")
    print(f"a2a-sdk  message/send → Message: {best_theirs:7.0f} req/s (best of {ROUNDS} x {CALLS})")
    overhead = best_theirs / best_ours - 1
    print(
        f"bridge overhead vs a2a-sdk: {overhead * 100:+.1f} % (negative = faster; target <= +10 %)"
    )


if __name__ == "__main__":
    asyncio.run(main())
