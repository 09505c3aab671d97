"""``--agent`` values: a built-in agent (``demo``, ``tck``), ``package.module:attribute``, or
``grpc://host:port`` (an agent in another process, any language, behind ``AgentHost``)."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import AsyncIterator

from trpc_bridge.agent import Agent


class AgentLoadError(ValueError):
    """``--agent`` names nothing usable; the message says what and why."""


def load_agent(spec: str) -> Agent:
    """A built-in agent (``demo``, ``tck``), or the object at ``module:attr``; a callable
    attribute
    (a factory) is called without arguments. Modules are also looked up in the current
    directory, as ``uvicorn module:app`` does, so ``--agent weather:agent`` finds
    ``./weather.py``."""
    if spec.startswith("grpc://"):
        raise AgentLoadError(f"{spec} needs a connection: use opened_agent")
    if spec == "demo":
        from trpc_bridge.agents.demo import demo_agent

        return demo_agent()
    if spec == "tck":
        from trpc_bridge.agents.tck import tck_agent

        return tck_agent()
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise AgentLoadError(
            f"--agent must be 'demo', 'tck', 'module:attr' or 'grpc://host:port', got {spec!r}"
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AgentLoadError(f"cannot import {module_name!r}: {exc}") from exc
    try:
        target = getattr(module, attr)
    except AttributeError as exc:
        raise AgentLoadError(f"module {module_name!r} has no attribute {attr!r}") from exc
    agent = target() if callable(target) and not isinstance(target, Agent) else target
    if not isinstance(agent, Agent):
        raise AgentLoadError(f"{spec} is not an Agent (name, description, skills, run)")
    return agent


@contextlib.asynccontextmanager
async def opened_agent(spec: str) -> AsyncIterator[Agent]:
    """The agent ``spec`` names, for as long as the block runs: :func:`load_agent`'s, or
    for ``grpc://host:port[?options]`` a :class:`~trpc_bridge.client.grpc_agent.GrpcAgent`
    connected to it (closed on exit). Raises :class:`AgentLoadError`, or
    :class:`~trpc_bridge.client.RemoteAgentError` when the sidecar cannot be used."""
    if not spec.startswith("grpc://"):
        yield load_agent(spec)
        return
    from trpc_bridge.client.grpc_agent import GrpcAgent

    async with await GrpcAgent.connect(spec) as agent:
        yield agent
