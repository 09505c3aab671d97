"""The ``trpc-bridge`` Typer application and the options every command shares.

The commands live one per module next to this one (``serve``, ``call``, ``proxy``) and
register themselves on :data:`app` when :mod:`trpc_bridge.cli` is imported.
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
