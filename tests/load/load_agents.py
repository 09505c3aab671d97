"""Agents the load and fault tests serve in a separate ``trpc-bridge serve`` process
(``--agent load_agents:echo``, with this folder on ``PYTHONPATH``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.names import new_response_id

#: Deltas per echoed stream.
PIECES = 20


def expected_echo(text: str) -> str:
    """What :data:`echo` streams back for ``text``: every piece names its caller."""
    return "".join(f"{text}:{i} " for i in range(PIECES))


async def _echo(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    response_id = new_response_id()
    for i in range(PIECES):
        yield AgentEvent.text_delta(f"{request.text}:{i} ", response_id)
        await asyncio.sleep(0.01)  # interleave with every other stream


echo = FunctionAgent(name="echo", description="streams the request back", fn=_echo)
