"""The one interface every agent implements, local or remote."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from trpc_bridge.events import AgentEvent, AgentRequest

log = logging.getLogger("trpc_bridge.agent")


@dataclass(frozen=True)
class Skill:
    """A capability advertised on the agent card (a tool, or the agent's main skill)."""

    name: str
    description: str = ""
    tags: tuple[str, ...] = ("tool",)


@runtime_checkable
class Agent(Protocol):
    """An agent: a name, a description, optional skills, and an event stream per request.

    ``run`` is an async generator. Stopping the iteration (``aclose()`` or cancelling the
    task that iterates it) must be enough to stop the agent's work; the bridge does that
    on ``tasks/cancel`` and on client disconnect.

    Optional: ``tools_run_elsewhere = True`` says the tool calls in the agent's events
    ran in another process (a :class:`~trpc_bridge.client.RemoteAgent`), which records
    their ``execute_tool`` spans; the bridge then records none (:func:`tools_run_elsewhere`).
    ``forwards_caller_token = True`` asks for the caller's bearer token in
    ``AgentRequest.caller_token`` (a proxy that forwards it upstream); no other agent
    gets it (:func:`forwards_caller_token`).

    Optional: ``meters_own_tokens = True`` says the agent's own client call records the
    token usage of its events (a remote agent, through
    :func:`~trpc_bridge.telemetry.client.trace_remote_run`); a server running it then
    does not record them again (:func:`meters_own_tokens`).
    """

    name: str
    description: str

    @property
    def skills(self) -> Sequence[Skill]: ...

    def run(self, request: AgentRequest) -> AsyncIterator[AgentEvent]: ...


@dataclass
class FunctionAgent:
    """Wraps an async generator function ``fn(request)`` as an :class:`Agent`."""

    name: str
    description: str
    fn: _RunFn
    skills: Sequence[Skill] = field(default_factory=tuple)

    def run(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        return self.fn(request)


class _RunFn(Protocol):
    def __call__(self, request: AgentRequest, /) -> AsyncIterator[AgentEvent]: ...


def tools_run_elsewhere(agent: Agent) -> bool:
    """Whether ``agent``'s tool calls ran in another process (see :class:`Agent`)."""
    return bool(getattr(agent, "tools_run_elsewhere", False))


def meters_own_tokens(agent: Agent) -> bool:
    """Whether ``agent``'s client call records its token usage (see :class:`Agent`)."""
    return bool(getattr(agent, "meters_own_tokens", False))


def forwards_caller_token(agent: Agent) -> bool:
    """Whether ``agent`` is given the caller's bearer token (see :class:`Agent`)."""
    return bool(getattr(agent, "forwards_caller_token", False))


async def close_events(events: AsyncIterator[AgentEvent]) -> None:
    """Stop an agent's run: close its event iterator if it can be closed (async
    generators can; a plain iterator has nothing to stop)."""
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()


@contextlib.asynccontextmanager
async def closing_events(
    events: AsyncIterator[AgentEvent],
) -> AsyncIterator[AsyncIterator[AgentEvent]]:
    """``async with closing_events(agent.run(request)) as events:`` — the run is stopped
    when the block exits, however it exits (``contextlib.aclosing`` for any iterator)."""
    try:
        yield events
    finally:
        await close_events(events)


def agent_failure_message(agent_name: str, exc: BaseException) -> str:
    """What the caller is told when an agent raised: ``agent failed: <ExceptionType>``.

    Only the exception's type goes on the wire: its text may hold anything (a connection
    string, a token, a user's data), and the caller is not necessarily trusted with it.
    The whole exception is logged here, on the server, for the operator.
    """
    log.error("agent %s raised", agent_name, exc_info=exc)
    return f"agent failed: {type(exc).__name__}"
