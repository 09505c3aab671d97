"""Calling remote A2A agents (trpc-agent-go's, the bridge's, any other) as local agents."""

from trpc_bridge.client.card import ResolvedCard, fetch_card
from trpc_bridge.client.errors import RemoteAgentError
from trpc_bridge.client.remote_agent import RemoteAgent
from trpc_bridge.client.tls import ClientTls

__all__ = ["ClientTls", "RemoteAgent", "RemoteAgentError", "ResolvedCard", "fetch_card"]
