"""``trpc-bridge serve``: an agent (Python, or any language behind ``AgentHost``) served
over A2A, AG-UI and the rest."""

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
        "demo",
        help="'demo', 'tck', 'package.module:attr' (an Agent or factory), or grpc://host:port "
        "(an AgentHost in any language; ?timeout=&idle_timeout=&connect_timeout= seconds).",
    ),
) -> None:
    """Serve an agent over A2A (JSON-RPC 0.3/1.0, REST, gRPC) the way trpc-agent-go does."""
    from trpc_bridge.agents.loader import AgentLoadError, opened_agent
    from trpc_bridge.client import RemoteAgentError
    from trpc_bridge.server import BridgeServer

    async def main() -> None:
        async with opened_agent(agent) as loaded:
            await BridgeServer(loaded, options).serve(typer.echo)

    try:
        run_until_interrupted(main())
    except AgentLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    except RemoteAgentError as exc:  # a grpc:// agent that cannot be reached or described
        typer.echo(f"cannot serve {agent}: {exc}", err=True)
        raise typer.Exit(1) from exc
