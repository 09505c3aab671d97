"""The ACP front door: ``trpc-bridge acp`` runs an agent (local, or a remote A2A agent
such as a trpc-agent-go one) as an Agent Client Protocol agent on stdio, the way editors
such as Zed start agents; every prompt goes through E2A (``trpc_bridge.codecs.e2a``)."""
