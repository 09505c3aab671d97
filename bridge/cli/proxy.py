"""``trpc-bridge proxy``: a remote A2A agent served again by the bridge.

A :class:`~trpc_bridge.client.RemoteAgent` is an :class:`~trpc_bridge.agent.Agent`, so the
proxy is the bridge server with the remote agent inside: a trpc-agent-go agent that speaks
only JSON-RPC 0.2.5-style A2A becomes reachable over JSON-RPC 0.3/1.0, REST, gRPC and
AG-UI (``/agui``), its stream aggregated by ``llm_response_id`` on the way out.

The upstream may also be ``grpc://host:port``, an agent behind ``AgentHost`` (any
language): then ``proxy --upstream`` is ``serve --agent`` with that URL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from trpc_bridge.cli.app import app
from trpc_bridge.cli.server_flags import run_until_interrupted, server_command

if TYPE_CHECKING:
    from trpc_bridge.server import ServerOptions


async def run_proxy(
    upstream: str, options: ServerOptions, echo: Callable[[str], object] = print
) -> None:
    """Serve ``upstream`` until cancelled. Raises ``RemoteAgentError`` when the upstream
    card cannot be used (or, for ``grpc://``, the AgentHost cannot be reached)."""
    from trpc_bridge.client import RemoteAgent
    from trpc_bridge.client.grpc_agent import GrpcAgent
    from trpc_bridge.server import BridgeServer

    if upstream.startswith("grpc://"):
        async with await GrpcAgent.connect(upstream) as agent:
            echo(f"upstream  {upstream}  (AgentHost)")
            await BridgeServer(agent, options).serve(echo)
        return
    async with await RemoteAgent.connect(upstream) as remote:
        echo(f"upstream  {upstream}  ({remote.endpoint.binding})")
        await BridgeServer(remote, options).serve(echo)


@app.command()
@server_command
def proxy(
    options: ServerOptions,
    upstream: str = typer.Option(
        ...,
        help="The upstream A2A agent's base URL (e.g. a trpc-agent-go server), or "
        "grpc://host:port for an AgentHost (the same as serve --agent grpc://…).",
    ),
) -> None:
    """Serve a remote agent (A2A, or AgentHost) over JSON-RPC 0.3/1.0, REST, gRPC and AG-UI."""
    from trpc_bridge.client import RemoteAgentError

    try:
        run_until_interrupted(run_proxy(upstream, options, typer.echo))
    except RemoteAgentError as exc:
        typer.echo(f"error: cannot proxy {upstream}: {exc}", err=True)
        raise typer.Exit(1) from exc
