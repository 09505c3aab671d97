"""The ``trpc-bridge`` command line: ``serve``, ``call``, ``proxy``.

Each command is a thin shell over the library: argument parsing and printing here,
behaviour in the modules it calls.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="trpc-bridge",
    help="Bridge Python agents and trpc-agent-go agents over A2A, AG-UI and OpenTelemetry.",
    no_args_is_help=True,
    add_completion=False,
)


def main() -> None:
    app()


# Commands are registered below by the modules that own them (serve: server, call: client).
