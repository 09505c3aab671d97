"""``trpc-bridge call``: one request to a remote agent, its events on stdout.

Exit status 0 when the run ended normally, 1 with a one-line message on stderr when the
agent could not be reached, its card is unusable, or the run ended in an error.

``--progress`` asks the agent for tfrs progress (docs/specs/tfrs-progress.md) and shows that instead
of the event stream (:mod:`trpc_bridge.cli.progress_view`), then the answer the run ended with;
with ``--json`` each progress item is a ``{"progress": …}`` line among the events.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

import typer

from trpc_bridge.agent import closing_events
from trpc_bridge.cli.app import app
from trpc_bridge.cli.console import ConsoleView
from trpc_bridge.cli.credential_flags import credential_command
from trpc_bridge.cli.progress_view import ProgressView
from trpc_bridge.client.card_trust import CardTrust
from trpc_bridge.client.credentials import CredentialOptions
from trpc_bridge.client.errors import RemoteAgentError
from trpc_bridge.client.progress import ProgressSink
from trpc_bridge.client.remote_agent import RemoteAgent
from trpc_bridge.client.tls import ClientTls
from trpc_bridge.codecs.tfrs import ProgressItem
from trpc_bridge.events import AgentEvent, AgentRequest, ObjectType, ResponseError, Role
from trpc_bridge.message_aggregate import MessageAggregator


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


class CallPrinter:
    """What ``call`` prints of a run's events: one JSON object per line (``--json``, the
    progress items among them as ``{"progress": …}`` lines), the live console view, or
    (``--progress``) the progress live and the answer once the run is over."""

    def __init__(
        self,
        write: Callable[[str], None],
        *,
        json_lines: bool = False,
        progress: bool = False,
        color: bool = False,
        live: bool = False,
    ) -> None:
        self._write = write
        self._json = json_lines
        self._progress = progress
        self._answer = MessageAggregator()
        self.view = ConsoleView(write, color=color)
        #: Receives the run's progress items (``--progress`` only).
        self.sink: ProgressSink | None = None
        if progress:
            self.view = progress_view = ProgressView(write, color=color, live=live)
            self.sink = self._json_progress if json_lines else progress_view.show_progress

    def show(self, event: AgentEvent) -> None:
        if self._json:
            if not _empty_chunk(event):
                self._write(event.to_json_line() + "\n")
        elif self._progress:
            self._answer.add(event)  # shown once the run is over
        else:
            self.view.show(event)

    def close(self, *, failed: bool) -> None:
        if isinstance(self.view, ProgressView) and not self._json and not failed:
            self.view.answer(_final_answer(self._answer))  # a failed run has no answer
        self.view.close()

    def _json_progress(self, item: ProgressItem) -> None:
        shown = (
            {"text": item.text}
            if item.pseudo
            else item.envelope.model_dump(by_alias=True, exclude_none=True)
        )
        self._write(json.dumps({"progress": shown}, ensure_ascii=False) + "\n")


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
    progress: bool = False,
    credentials: CredentialOptions | None = None,
    card_trust: CardTrust | None = None,
    tls: ClientTls | None = None,
) -> int:
    request = AgentRequest(text=message, user_id=user, context_id=context)
    tty = sys.stdout.isatty()
    printer = CallPrinter(_write, json_lines=json_lines, progress=progress, color=tty, live=tty)
    error: ResponseError | None = None
    try:
        async with (
            await RemoteAgent.connect(
                url,
                transport=transport,
                version=version,
                stream=stream,
                credentials=credentials,
                card_trust=card_trust,
                tls=tls,
            ) as agent,
            # Closed before the agent: leaving early must still cancel the remote task,
            # which needs the agent's connection.
            closing_events(agent.run(request, progress=printer.sink)) as events,
        ):
            async for event in events:
                printer.show(event)
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
        printer.close(failed=error is not None)  # stderr says why a run failed
    if error is not None:
        typer.echo(f"error: {error.type}: {error.message}", err=True)
        return 1
    return 0


def _final_answer(run: MessageAggregator) -> str:
    """The last assistant text of the run: the response the run ended with."""
    texts = [m.text for m in run.messages if m.role == Role.ASSISTANT and m.text]
    return texts[-1] if texts else ""


@app.command()
@credential_command()
def call(
    credentials: CredentialOptions,
    card_trust: CardTrust | None,
    tls: ClientTls,
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
    progress: bool = typer.Option(
        False,
        "--progress",
        help="Ask for tfrs progress and show it live (thinking, tool calls), then the answer.",
    ),
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
            progress=progress,
            credentials=credentials,
            card_trust=card_trust,
            tls=tls,
        )
    )
    raise typer.Exit(code)
