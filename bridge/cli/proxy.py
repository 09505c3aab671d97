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
from trpc_bridge.cli.credential_flags import credential_command
from trpc_bridge.cli.server_flags import run_until_interrupted, server_command
from trpc_bridge.client.card_trust import CardTrust
from trpc_bridge.client.credentials import CredentialOptions, ForwardedToken
from trpc_bridge.client.tls import ClientTls

if TYPE_CHECKING:
    from trpc_bridge.server import ServerOptions

#: ``--upstream-auth`` choices.
OWN, FORWARD = "own", "forward"


async def run_proxy(
    upstream: str,
    options: ServerOptions,
    echo: Callable[[str], object] = print,
    *,
    credentials: CredentialOptions | ForwardedToken | None = None,
    card_trust: CardTrust | None = None,
    tls: ClientTls | None = None,
) -> None:
    """Serve ``upstream`` until cancelled. Raises ``RemoteAgentError`` when the upstream
    card cannot be used (or, for ``grpc://``, the AgentHost cannot be reached).
    ``credentials``: the proxy's own, or :class:`ForwardedToken` (each caller's bearer
    token goes upstream, to the upstream's host only). ``tls``: the CAs the upstream's
    certificate is checked with, and the proxy's own client certificate for it."""
    from trpc_bridge.client import RemoteAgent, RemoteAgentError
    from trpc_bridge.client.grpc_agent import GrpcAgent
    from trpc_bridge.server import BridgeServer

    if upstream.startswith("grpc://"):
        if (
            credentials is not None
            and not (isinstance(credentials, CredentialOptions) and credentials.empty)
        ) or (tls is not None and tls != ClientTls()):
            # An AgentHost is a sidecar on a plain local channel.
            raise RemoteAgentError(
                "upstream credentials and TLS are for A2A upstreams, not AgentHost"
            )
        async with await GrpcAgent.connect(upstream) as agent:
            echo(f"upstream  {upstream}  (AgentHost)")
            await BridgeServer(agent, options).serve(echo)
        return
    async with await RemoteAgent.connect(
        upstream, credentials=credentials, card_trust=card_trust, tls=tls
    ) as remote:
        echo(f"upstream  {upstream}  ({remote.endpoint.binding})")
        await BridgeServer(remote, options).serve(echo)


@app.command()
@server_command
@credential_command("upstream-")
def proxy(
    options: ServerOptions,
    credentials: CredentialOptions,
    card_trust: CardTrust | None,
    tls: ClientTls,
    upstream: str = typer.Option(
        ...,
        help="The upstream A2A agent's base URL (e.g. a trpc-agent-go server), or "
        "grpc://host:port for an AgentHost (the same as serve --agent grpc://…).",
    ),
    upstream_auth: str = typer.Option(
        OWN,
        help="own: the proxy's own credential upstream (--upstream-token, "
        "--upstream-token-file, --upstream-client-id…; none given: none); forward: each "
        "caller's verified bearer token, sent to the upstream's host only.",
    ),
) -> None:
    """Serve a remote agent (A2A, or AgentHost) over JSON-RPC 0.3/1.0, REST, gRPC and AG-UI."""
    from trpc_bridge.client import RemoteAgentError

    if upstream_auth not in (OWN, FORWARD):
        typer.echo(f"error: --upstream-auth is {OWN} or {FORWARD}, not {upstream_auth!r}", err=True)
        raise typer.Exit(2)
    if upstream_auth == FORWARD and not credentials.empty:
        typer.echo(
            "error: --upstream-auth forward sends the caller's token: give no "
            "credential of the proxy's own",
            err=True,
        )
        raise typer.Exit(2)
    upstream_credentials = ForwardedToken() if upstream_auth == FORWARD else credentials
    try:
        run_until_interrupted(
            run_proxy(
                upstream,
                options,
                typer.echo,
                credentials=upstream_credentials,
                card_trust=card_trust,
                tls=tls,
            )
        )
    except RemoteAgentError as exc:
        typer.echo(f"error: cannot proxy {upstream}: {exc}", err=True)
        raise typer.Exit(1) from exc
