"""A test agent exercising everything the AG-UI translator renders, and a loopback uvicorn
server for it. Shared by the endpoint tests and ``bench/agui.py``.

The user's text picks the behaviour: ``error`` ends with a failure event, ``raise`` raises
mid-stream, ``hang`` streams one delta and then waits forever; anything else runs the full
showcase (reasoning, text, parallel tool calls and results, code and its output, state
delta, final text).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.routing import BaseRoute

from trpc_bridge.events import AgentEvent, AgentRequest, FunctionCall, ToolCall
from trpc_bridge.server.http.listener import serving


def showcase_events() -> list[AgentEvent]:
    calls = [
        ToolCall(
            id="call_w", function=FunctionCall(name="get_weather", arguments='{"city":"Beijing"}')
        ),
        ToolCall(id="call_t", function=FunctionCall(name="get_time", arguments="{}")),
    ]
    return [
        AgentEvent.reasoning_delta("The user wants", "resp-1"),
        AgentEvent.reasoning_delta(" weather and time.", "resp-1"),
        AgentEvent.text_delta("Let me", "resp-1"),
        AgentEvent.text_delta(" check.", "resp-1"),
        AgentEvent.tool_calls(calls, "resp-1"),
        AgentEvent.tool_result("call_w", "get_weather", {"temp": "20°C"}),
        AgentEvent.tool_result("call_t", "get_time", "10:30"),
        AgentEvent.code("print(20 * 9 / 5 + 32)"),
        AgentEvent.code_result("68.0\n"),
        AgentEvent.state({"units": b'"C"', "last_city": b"Beijing", "gone": None}),
        AgentEvent.text_delta("It is 20°C", "resp-2"),
        AgentEvent.text_delta(" (68°F) at 10:30.", "resp-2"),
        AgentEvent.final_text("It is 20°C (68°F) at 10:30.", "resp-2"),
    ]


@dataclass
class ShowcaseAgent:
    name: str = "showcase"
    description: str = "Streams every kind of event the AG-UI translator renders."
    skills: tuple[()] = ()
    requests: list[AgentRequest] = field(default_factory=list)
    #: Set when a ``hang`` run's iterator is closed.
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        self.requests.append(request)
        if request.text == "error":
            yield AgentEvent.text_delta("Trying", "resp-e")
            yield AgentEvent.failure("upstream model overloaded", code="503")
        elif request.text == "raise":
            yield AgentEvent.reasoning_delta("about to fail", "resp-r")
            raise RuntimeError("agent crashed")
        elif request.text == "hang":
            try:
                yield AgentEvent.text_delta("waiting", "resp-h")
                await asyncio.Event().wait()
            finally:
                self.closed.set()
        else:
            for event in showcase_events():
                yield event


@contextlib.asynccontextmanager
async def loopback(routes: list[BaseRoute]) -> AsyncIterator[str]:
    """Serve ``routes`` with uvicorn on a free 127.0.0.1 port; yields the base URL."""
    async with serving(Starlette(routes=routes)) as base:
        yield base
