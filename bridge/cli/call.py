"""``trpc-bridge call``: one request to a remote agent, its events on stdout.

Exit status 0 when the run ended normally, 1 with a one-line message on stderr when the
agent could not be reached, its card is unusable, or the run ended in an error.
"""

from __future__ import annotations

import os
import sys

import typer

from trpc_bridge.agent import closing_events
from trpc_bridge.cli.app import app
from trpc_bridge.cli.console import ConsoleView
from trpc_bridge.client.card import RemoteAgentError
from trpc_bridge.client.remote_agent import RemoteAgent
from trpc_bridge.events import AgentEvent, AgentRequest, ObjectType, ResponseError


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _empty_chunk(event: AgentEvent) -> bool:
    """A chunk that carries nothing: what a unary (``message/send``) result keeps of each
    partial chunk, as trpc packs it (a metadata-only history message). Not worth a line."""
    return (
        event.object == ObjectType.CHUNK
        and event.error is None
        and not event.state_delta
        and all(c.message.is_empty() and c.delta.is_empty() for c in event.choices)
    )


async def run_call(
    url: str,
    message: str,
    *,
    json_lines: bool = False,
    stream: bool | None = None,
    transport: str | None = None,
    version: str | None = None,
    user: str = "",
    context: str = "",
) -> int:
    request = AgentRequest(text=message, user_id=user, context_id=context)
    view = ConsoleView(_write, color=sys.stdout.isatty())
    error: ResponseError | None = None
    try:
        async with (
            await RemoteAgent.connect(
                url, transport=transport, version=version, stream=stream
            ) as agent,
            # Closed before the agent: leaving early must still cancel the remote task,
            # which needs the agent's connection.
            closing_events(agent.run(request)) as events,
        ):
            async for event in events:
                if json_lines:
                    if not _empty_chunk(event):
                        _write(event.to_json_line() + "\n")
                else:
                    view.show(event)
                if event.error is not None and event.is_terminal_error():
                    error = event.error
    except RemoteAgentError as exc:
        typer.echo(f"error: {exc}", err=True)
        return 1
    except BrokenPipeError:
        # The reader went away (`… | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        view.close()
    if error is not None:
        typer.echo(f"error: {error.type}: {error.message}", err=True)
        return 1
    return 0


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
