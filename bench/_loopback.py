"""Shared by the server benchmarks: a plain a2a-sdk server (the baseline) on loopback,
and timing of raw 0.3 JSON-RPC calls. Not a benchmark itself."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
from a2a.server.agent_execution import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette

from trpc_bridge.server.http.listener import HttpListener


def sdk_card(url: str) -> AgentCard:
    return AgentCard(
        name="baseline",
        description="plain a2a-sdk",
        version="1",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="0.3")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[AgentSkill(id="agent", name="baseline", description="baseline", tags=["bench"])],
    )


@contextlib.asynccontextmanager
async def sdk_server(executor: AgentExecutor) -> AsyncIterator[str]:
    def app(url: str) -> Starlette:
        card = sdk_card(url)
        handler = DefaultRequestHandler(
            agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
        )
        routes = [
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
        ]
        return Starlette(routes=routes)

    listener = HttpListener()  # bound first: the card names the server's URL
    await listener.start(app(f"{listener.url}/"), log_level="error")
    try:
        yield f"{listener.url}/"
    finally:
        await listener.stop()


def message_body(method: str, text: str, index: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": f"r{index}",
        "method": method,
        "params": {
            "message": {
                "kind": "message",
                "messageId": f"m{index}",
                "role": "user",
                "parts": [{"kind": "text", "text": text}],
                "metadata": {"interaction_spec_version": "0.1"},
            }
        },
    }


async def time_stream(http: httpx.AsyncClient, url: str, text: str) -> tuple[float, int]:
    """Seconds from the POST to the last SSE frame, and the number of frames."""
    start = time.perf_counter()
    frames = 0
    async with http.stream("POST", url, json=message_body("message/stream", text, 0)) as r:
        async for line in r.aiter_lines():
            if line.startswith("data:"):
                frames += 1
    return time.perf_counter() - start, frames


if __name__ == "__main__":
    print("bench/_loopback.py: helpers for the server benchmarks (nothing to measure)")
