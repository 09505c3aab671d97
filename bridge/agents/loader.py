"""``--agent`` values: a built-in agent (``demo``, ``tck``) or ``package.module:attribute``."""

from __future__ import annotations

import importlib
import os
import sys

from trpc_bridge.agent import Agent


class AgentLoadError(ValueError):
    """``--agent`` names nothing usable; the message says what and why."""


def load_agent(spec: str) -> Agent:
    """A built-in agent (``demo``, ``tck``), or the object at ``module:attr``; a callable
    attribute
    (a factory) is called without arguments. Modules are also looked up in the current
    directory, as ``uvicorn module:app`` does, so ``--agent weather:agent`` finds
    ``./weather.py``."""
    if spec == "demo":
        from trpc_bridge.agents.demo import demo_agent

        return demo_agent()
    if spec == "tck":
        from trpc_bridge.agents.tck import tck_agent

        return tck_agent()
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise AgentLoadError(f"--agent must be 'demo', 'tck' or 'module:attr', got {spec!r}")
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
