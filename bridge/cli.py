"""The ``trpc-bridge`` command line: ``serve``, ``call``, ``proxy``.

Each command is a thin shell over the library: argument parsing and printing here,
behaviour in the modules it calls.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:  # the CLI imports the server lazily: `call` never needs it
    from trpc_bridge.server import ServerOptions

app = typer.Typer(
    name="trpc-bridge",
    help="Bridge Python agents and trpc-agent-go agents over A2A, AG-UI and OpenTelemetry.",
    no_args_is_help=True,
    add_completion=False,
)


def main() -> None:
    app()


def _print_version(value: bool) -> None:
    if value:
        from trpc_bridge import __version__

        typer.echo(f"trpc-bridge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version."
    ),
    sdk_spans: bool = typer.Option(
        False,
        "--sdk-spans",
        help="Also record a2a-sdk's own spans (dozens per request; off by default, "
        "as is OTEL_INSTRUMENTATION_A2A_SDK_ENABLED).",
    ),
) -> None:
    """Keeps every command a subcommand (typer promotes a lone command to the root).

    Tracing is set up here, for every command, from the OTEL_* environment (off unless
    an exporter is configured); commands import a2a later, so --sdk-spans still counts.
    """
    from trpc_bridge.telemetry.sdk_spans import configure_sdk_spans
    from trpc_bridge.telemetry.setup import setup_tracing

    configure_sdk_spans(True if sdk_spans else None)
    setup_tracing()


# Server flags shared by `serve` and `proxy`: module-level option objects, so both
# commands take the same flags with the same help (and list-typed options need it: B008).
_HOST = typer.Option("127.0.0.1", help="Interface to bind.")
_PORT = typer.Option(8080, help="HTTP port (JSON-RPC, REST, AG-UI, card); 0 = any free port.")
_GRPC_PORT = typer.Option(50051, help="gRPC port (A2A 0.3 and 1.0); 0 = any free, -1 = off.")
_NEGOTIATION = typer.Option(
    "auto", help="auto: trpc encoding iff the request declares the spec version; always; never."
)
_TASK_STORE = typer.Option(
    "", help="Task store URL: empty = memory, sqlite:///x.db, postgresql+asyncpg://…"
)
_KEEP_TASKS = typer.Option(
    10_000, help="In-memory store: finished tasks kept for tasks/get (oldest dropped)."
)
_MAX_REQUEST_BYTES = typer.Option(10 * 1024 * 1024, help="Largest accepted request body.")
_ADK_KEYS = typer.Option(
    True, "--adk-keys/--no-adk-keys", help="Also write adk_type / adk_thought (trpc default)."
)
_GRAPH_EVENTS = typer.Option(
    None,
    "--graph-events",
    help="graph.* object types that may cross (exact, prefix*, *suffix, *); repeatable. "
    "Default: graph.execution, as trpc-agent-go.",
)
_STRUCTURED_ERRORS = typer.Option(
    True,
    "--structured-errors/--generic-errors",
    help="Failed status with error metadata, or trpc's default generic error message.",
)


def _server_options(
    *,
    host: str,
    port: int,
    grpc_port: int,
    negotiation: str,
    task_store: str,
    keep_tasks: int,
    max_request_bytes: int,
    adk_keys: bool,
    graph_events: list[str] | None,
    structured_errors: bool,
) -> ServerOptions:
    from trpc_bridge.codecs.trpc_encode import EncodeOptions
    from trpc_bridge.codecs.trpc_request import Negotiation
    from trpc_bridge.server import ServerOptions

    try:
        policy = Negotiation(negotiation)
    except ValueError:
        raise typer.BadParameter(
            "must be auto, always or never", param_hint="--negotiation"
        ) from None
    return ServerOptions(
        host=host,
        port=port,
        grpc_port=None if grpc_port < 0 else grpc_port,
        negotiation=policy,
        encode=EncodeOptions(
            adk_compat=adk_keys,
            graph_allowlist=tuple(graph_events or EncodeOptions().graph_allowlist),
            structured_errors=structured_errors,
        ),
        task_store=task_store,
        keep_tasks=keep_tasks,
        max_request_bytes=max_request_bytes,
    )


def _run_until_interrupted(main: Coroutine[Any, Any, None]) -> None:
    """Run a server until Ctrl-C; a port that cannot be bound is one line and exit 1."""
    import asyncio
    import contextlib

    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(main)
    except OSError as exc:  # a port in use, an address not on this host
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc


@app.command()
def serve(
    agent: str = typer.Option(
        "demo", help="'demo' or 'package.module:attr' (an Agent or factory)."
    ),
    host: str = _HOST,
    port: int = _PORT,
    grpc_port: int = _GRPC_PORT,
    negotiation: str = _NEGOTIATION,
    task_store: str = _TASK_STORE,
    keep_tasks: int = _KEEP_TASKS,
    max_request_bytes: int = _MAX_REQUEST_BYTES,
    adk_keys: bool = _ADK_KEYS,
    graph_events: list[str] | None = _GRAPH_EVENTS,
    structured_errors: bool = _STRUCTURED_ERRORS,
) -> None:
    """Serve a Python agent over A2A (JSON-RPC 0.3/1.0, REST, gRPC) the way trpc-agent-go does."""
    from trpc_bridge.server import BridgeServer
    from trpc_bridge.server.loader import AgentLoadError, load_agent

    options = _server_options(
        host=host,
        port=port,
        grpc_port=grpc_port,
        negotiation=negotiation,
        task_store=task_store,
        keep_tasks=keep_tasks,
        max_request_bytes=max_request_bytes,
        adk_keys=adk_keys,
        graph_events=graph_events,
        structured_errors=structured_errors,
    )
    try:
        loaded = load_agent(agent)
    except AgentLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    _run_until_interrupted(BridgeServer(loaded, options).serve(typer.echo))


@app.command()
def call(
    url: str = typer.Argument(..., help="The agent's base URL (its card is read from there)."),
    message: str = typer.Argument(..., help="The text to send."),
    json_lines: bool = typer.Option(False, "--json", help="One event per line, as JSON."),
    stream: bool | None = typer.Option(
        None, "--stream/--no-stream", help="Default: what the card's capabilities say."
    ),
    transport: str | None = typer.Option(
        None, help="jsonrpc, rest or grpc (default: the card's best)."
    ),
    a2a_version: str | None = typer.Option(
        None, "--a2a-version", help="0.3 or 1.0 (default: the newest the card offers)."
    ),
    user: str = typer.Option("", help="User id, sent as X-User-ID (x-user-id on gRPC)."),
    context: str = typer.Option("", help="Context (session) id."),
) -> None:
    """Call an A2A agent (trpc-agent-go's, the bridge's, any) and show its events."""
    import asyncio

    from trpc_bridge.client.call_command import run_call

    code = asyncio.run(
        run_call(
            url,
            message,
            json_lines=json_lines,
            stream=stream,
            transport=transport,
            version=a2a_version,
            user=user,
            context=context,
        )
    )
    raise typer.Exit(code)


@app.command()
def proxy(
    upstream: str = typer.Option(
        ..., help="The upstream A2A agent's base URL (e.g. a trpc-agent-go server)."
    ),
    host: str = _HOST,
    port: int = _PORT,
    grpc_port: int = _GRPC_PORT,
    negotiation: str = _NEGOTIATION,
    task_store: str = _TASK_STORE,
    keep_tasks: int = _KEEP_TASKS,
    max_request_bytes: int = _MAX_REQUEST_BYTES,
    adk_keys: bool = _ADK_KEYS,
    graph_events: list[str] | None = _GRAPH_EVENTS,
    structured_errors: bool = _STRUCTURED_ERRORS,
) -> None:
    """Serve a remote A2A agent over JSON-RPC 0.3/1.0, REST, gRPC and AG-UI (/agui)."""
    from trpc_bridge.client import RemoteAgentError
    from trpc_bridge.proxy_command import run_proxy

    options = _server_options(
        host=host,
        port=port,
        grpc_port=grpc_port,
        negotiation=negotiation,
        task_store=task_store,
        keep_tasks=keep_tasks,
        max_request_bytes=max_request_bytes,
        adk_keys=adk_keys,
        graph_events=graph_events,
        structured_errors=structured_errors,
    )
    try:
        _run_until_interrupted(run_proxy(upstream, options, typer.echo))
    except RemoteAgentError as exc:
        typer.echo(f"cannot proxy {upstream}: {exc}", err=True)
        raise typer.Exit(1) from exc


@app.command()
def acp(
    agent: str = typer.Option(
        "", help="A local Python agent: 'demo' or 'package.module:attr' (an Agent or factory)."
    ),
    upstream: str = typer.Option(
        "", help="Or a remote A2A agent's base URL (e.g. a trpc-agent-go server)."
    ),
    user: str = typer.Option(
        "anonymous", help="The user id the agent sees (sent upstream as X-User-ID)."
    ),
    wire_log: str = typer.Option(
        "", "--wire-log", help="Append every E2A response as one JSON line to this file."
    ),
) -> None:
    """Run the agent as an ACP (Agent Client Protocol) agent on stdio, for editors."""
    import asyncio

    if bool(agent) == bool(upstream):
        typer.echo("error: give exactly one of --agent and --upstream", err=True)
        raise typer.Exit(2)
    user_id = user.strip()
    if not user_id or len(user_id) > 255:
        typer.echo("error: --user must be 1 to 255 characters", err=True)
        raise typer.Exit(2)
    from trpc_bridge.acp.stdio import StdioError, serve_acp, serve_acp_upstream
    from trpc_bridge.client.card import RemoteAgentError
    from trpc_bridge.server.loader import AgentLoadError, load_agent

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
