"""``--agent`` values: ``demo`` or ``package.module:attribute``."""

from __future__ import annotations

import importlib

from trpc_bridge.agent import Agent


def load_agent(spec: str) -> Agent:
    """The built-in demo agent, or the object at ``module:attr``; a callable attribute
    (a factory) is called without arguments."""
    if spec == "demo":
        from trpc_bridge.demo_agent import demo_agent

        return demo_agent()
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"--agent must be 'demo' or 'module:attr', got {spec!r}")
    target = getattr(importlib.import_module(module_name), attr)
    agent = target if isinstance(target, Agent) else target()
    if not isinstance(agent, Agent):
        raise TypeError(f"{spec} is not an Agent (name, description, skills, run)")
    return agent
