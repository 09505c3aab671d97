"""The relay of an AG-UI run (:mod:`.relay`): a relayed delta is the ``TEXT_MESSAGE_CONTENT``
(or reasoning content) SSE event the door wrote for the delta before it, with its own
text, handed to the door's outbox. The text goes in as orjson writes a JSON string, which
is how ag-ui's encoder (pydantic) writes it (``tests/server/test_relay_equivalence.py``).
An AG-UI translator's output depends on the message open before (a delta after another
response's opens its own message), so a key is relayed only right after a frame of the
same key."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import orjson

from trpc_bridge.agent import Agent
from trpc_bridge.client.remote_agent import RemoteAgent
from trpc_bridge.server.proxying.relay import Relay, reasoning_relayed, relays_from


def _quoted(text: str) -> str | None:
    try:
        return orjson.dumps(text).decode()
    except orjson.JSONEncodeError:  # a lone surrogate
        return None


class AguiRelay(Relay[str, tuple[str, str]]):
    """A relayed AG-UI run, writing to the door's outbox."""

    consecutive = True

    def __init__(
        self,
        agent: RemoteAgent,
        emit: Callable[[str], None],
        pace: Callable[[], Awaitable[None]],
        *,
        reasoning: bool,
    ) -> None:
        super().__init__(agent, reasoning=reasoning)
        self._emit = emit
        self._pace = pace

    def make(self, template: tuple[str, str], text: str) -> str:
        before, after = template
        return before + orjson.dumps(text).decode() + after

    def template(self, outputs: list[str], text: str) -> tuple[str, str] | None:
        quoted = _quoted(text)
        if len(outputs) != 1 or quoted is None:
            return None
        output = outputs[0]
        at = output.find(quoted)
        if at < 0 or output.find(quoted, at + 1) >= 0:
            return None
        return output[:at], output[at + len(quoted) :]

    def emit(self, output: str) -> None:
        self._emit(output)

    async def pace(self) -> None:
        await self._pace()


def agui_relay_for(
    agent: Agent, emit: Callable[[str], None], pace: Callable[[], Awaitable[None]]
) -> AguiRelay | None:
    """A relay for an AG-UI run of ``agent`` when its streams can be relayed; None: the
    event path."""
    remote = relays_from(agent)
    if remote is None:
        return None
    return AguiRelay(remote, emit, pace, reasoning=reasoning_relayed())
