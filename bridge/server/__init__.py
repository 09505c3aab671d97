"""Serve Python agents to A2A callers (trpc-agent-go, a2a-sdk, ADK) over JSON-RPC 0.3/1.0,
REST and gRPC. Entry point: :class:`BridgeServer`."""

from trpc_bridge.server.a2a.handler import BridgeRequestHandler, HandlerOptions
from trpc_bridge.server.app import BridgeServer, ServerOptions
from trpc_bridge.server.tasks.store import make_task_store

__all__ = [
    "BridgeRequestHandler",
    "BridgeServer",
    "HandlerOptions",
    "ServerOptions",
    "make_task_store",
]
