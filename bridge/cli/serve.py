"""``trpc-bridge serve``: a Python agent served over A2A, AG-UI and the rest."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from trpc_bridge.cli.app import app
from trpc_bridge.cli.server_flags import run_until_interrupted, server_command

if TYPE_CHECKING:
    from trpc_bridge.server import ServerOptions


@app.command()
@server_command
def serve(
    options: ServerOptions,
    agent: str = typer.Option(
        "demo", help="'demo', 'tck' or 'package.module:attr' (an Agent or factory)."
    ),
) -> None:
    """Serve a Python agent over A2A (JSON-RPC 0.3/1.0, REST, gRPC) the way trpc-agent-go does."""
    from trpc_bridge.agents.loader import AgentLoadError, load_agent
    from trpc_bridge.server import BridgeServer

    try:
        loaded = load_agent(agent)
    except AgentLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc

    async def main() -> None:  # built inside: a task store it cannot use is a clean error
        await BridgeServer(loaded, options).serve(typer.echo)

    run_until_interrupted(main())
