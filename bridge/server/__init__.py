"""Serve Python agents to A2A callers (trpc-agent-go, a2a-sdk, ADK) over JSON-RPC 0.3/1.0,
REST and gRPC. Entry point: :class:`BridgeServer`, configured by :class:`ServerOptions`.

The option types are imported eagerly and the server lazily: the CLI reads its flags'
defaults from the option types at start, and ``call`` never needs the server itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trpc_bridge.server.options import (
    Durability,
    EncodingOptions,
    Limits,
    PushOptions,
    ServerOptions,
)

if TYPE_CHECKING:
    from trpc_bridge.server.a2a.handler import BridgeRequestHandler
    from trpc_bridge.server.app import BridgeServer
    from trpc_bridge.server.tasks.store import make_task_store

_LAZY = {
    "BridgeServer": "trpc_bridge.server.app",
    "BridgeRequestHandler": "trpc_bridge.server.a2a.handler",
    "make_task_store": "trpc_bridge.server.tasks.store",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BridgeRequestHandler",
    "BridgeServer",
    "Durability",
    "EncodingOptions",
    "Limits",
    "PushOptions",
    "ServerOptions",
    "make_task_store",
]
