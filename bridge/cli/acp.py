"""``trpc-bridge acp``: an agent as an ACP (Agent Client Protocol) agent on stdio."""

from __future__ import annotations

import typer

from trpc_bridge.cli.app import app


@app.command()
def acp(
    agent: str = typer.Option(
        "", help="A local Python agent: 'demo' or 'package.module:attr' (an Agent or factory)."
    ),
    upstream: str = typer.Option(
        "", help="Or a remote A2A agent's base URL (e.g. a trpc-agent-go server)."
    ),
    user: str = typer.Option(
        "", help="The user id the agent sees (sent upstream as X-User-ID); default anonymous."
    ),
    wire_log: str = typer.Option(
        "", "--wire-log", help="Append every E2A response as one JSON line to this file."
    ),
) -> None:
    """Run the agent as an ACP agent on stdin/stdout, as editors (Zed, …) start agents."""
    import asyncio

    from trpc_bridge.server.auth.errors import AuthError
    from trpc_bridge.server.auth.trusted_header import header_principal

    if bool(agent) == bool(upstream):
        typer.echo("error: give exactly one of --agent and --upstream", err=True)
        raise typer.Exit(2)
    try:
        # The local user's choice, read as the trusted header is (the one identity rule).
        user_id = header_principal(user).user_id
    except AuthError as exc:
        typer.echo(f"error: --user: {exc.message}", err=True)
        raise typer.Exit(2) from exc
    from trpc_bridge import redaction
    from trpc_bridge.agents.loader import AgentLoadError, load_agent
    from trpc_bridge.client.errors import RemoteAgentError
    from trpc_bridge.server.doors.acp.stdio import StdioError, serve_acp, serve_acp_upstream

    redaction.install(redaction.current())  # the wire log and the logs are masked
    try:
        if upstream:
            main = serve_acp_upstream(upstream, user_id=user_id, wire_log=wire_log or None)
        else:
            main = serve_acp(load_agent(agent), user_id=user_id, wire_log=wire_log or None)
        asyncio.run(main)
    except (AgentLoadError, StdioError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    except RemoteAgentError as exc:
        typer.echo(f"cannot reach {upstream}: {exc}", err=True)
        raise typer.Exit(1) from exc
    except KeyboardInterrupt:
        pass
