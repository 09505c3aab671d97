"""The other front doors, each a thin adapter over the one runner: AG-UI (``POST /agui``),
the AgentHost gRPC service, the playground page, and ACP on stdio (``doors/acp``)."""
