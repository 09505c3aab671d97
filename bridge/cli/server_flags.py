"""The flags every serving command shares (``serve``, ``proxy``), and the loop that runs a
server until Ctrl-C.

:func:`server_command` adds the flags of :data:`SERVER_FLAGS` to a command's signature and
hands the command one :class:`~trpc_bridge.server.ServerOptions` built from them, so a new
server flag is one row here and one field in ``ServerOptions``, never an edit of every
command. The server is imported lazily: ``call`` never needs it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import typer

from trpc_bridge.addresses import is_loopback
from trpc_bridge.cli.flag_values import FlagError, server_options
from trpc_bridge.server.auth.options import AUTH_CHOICES, SecurityOptions
from trpc_bridge.server.options import (
    Durability,
    EncodingOptions,
    Limits,
    PushOptions,
    ServerOptions,
)

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class _Flag:
    annotation: Any
    option: Any


def _env(name: str) -> str:
    """The environment variable that sets flag ``name`` (``--auth``: TRPC_BRIDGE_AUTH)."""
    return "TRPC_BRIDGE_" + name.upper()


def _security(name: str, help: str, *declarations: str, annotation: Any = str) -> _Flag:
    """Security flag ``name``: its default is ``SecurityOptions``' field of that name, and
    it is also read from its environment variable."""
    default = getattr(SecurityOptions, name)
    return _Flag(annotation, typer.Option(default, *declarations, envvar=_env(name), help=help))


#: Authentication and TLS (``server/auth``, ``docs/security.md``); each also read from
#: its environment variable, so a container needs no command line.
SECURITY_FLAGS: dict[str, _Flag] = {
    "auth": _security(
        "auth",
        f"Authentication scheme: {' | '.join(AUTH_CHOICES)}. none: X-User-ID is "
        "trusted, which only a loopback --host (or --trust-user-header) allows.",
    ),
    "oidc_issuer": _security(
        "oidc_issuer",
        "--auth oidc: the OpenID provider's issuer URL (its discovery document and "
        "keys are fetched from it).",
    ),
    "audience": _security(
        "audience", "--auth oidc: the audience (aud) a token must carry; empty = not checked."
    ),
    "user_claim": _security("user_claim", "--auth oidc: the token claim that names the user."),
    "oidc_ca_file": _security(
        "oidc_ca_file",
        "--auth oidc: CA bundle for the provider's TLS certificate (default: the system's).",
    ),
    "api_keys": _security(
        "api_keys",
        "--auth api-key: the key file ('<user> sha256:<hex>' per line; "
        "`trpc-bridge api-key USER` makes one); re-read when it changes.",
    ),
    "tls_cert": _security(
        "tls_cert",
        "Serve HTTPS and gRPC over TLS with this certificate (PEM; with --tls-key).",
    ),
    "tls_key": _security("tls_key", "The private key of --tls-cert (PEM)."),
    "tls_client_ca": _security(
        "tls_client_ca",
        "Require client certificates signed by this CA on both ports (mTLS; "
        "--auth mtls takes the user id from them).",
    ),
    "trust_user_header": _security(
        "trust_user_header",
        "Take X-User-ID on trust on any interface: only behind an authenticating "
        "proxy that sets it (loopback binds do this by default).",
        "--trust-user-header",
        annotation=bool,
    ),
    "forwarded_allow_ips": _security(
        "forwarded_allow_ips",
        "Reverse proxies (IPs or networks, comma-separated) whose X-Forwarded-For and "
        "X-Forwarded-Proto name the caller in logs and metrics; default: none.",
    ),
}


SERVER_FLAGS: dict[str, _Flag] = {
    "host": _Flag(str, typer.Option(ServerOptions.host, help="Interface to bind.")),
    "port": _Flag(
        int, typer.Option(8080, help="HTTP port (JSON-RPC, REST, AG-UI, card); 0 = any free port.")
    ),
    "grpc_port": _Flag(
        int, typer.Option(50051, help="gRPC port (A2A 0.3 and 1.0); 0 = any free, -1 = off.")
    ),
    "negotiation": _Flag(
        str,
        typer.Option(
            EncodingOptions.negotiation,
            help="auto: chosen per request from what the caller sends (adk for Google ADK "
            "clients, trpc-python for trpc-agent-python, trpc for trpc-agent-go and any "
            "caller declaring the spec version, plain A2A otherwise); always (trpc); never "
            "(plain A2A); or an encoding's name for everyone.",
        ),
    ),
    "task_store": _Flag(
        str,
        typer.Option(
            Durability.task_store,
            help="Task store URL: empty = memory, sqlite:////abs/path/tasks.db (four slashes: "
            "an absolute path), postgresql://user@host:5432/db. Checked at start.",
        ),
    ),
    "shutdown_grace": _Flag(
        float,
        typer.Option(
            Durability.shutdown_grace,
            help="Seconds running tasks get to finish after SIGTERM / Ctrl-C; then each "
            "stream ends with a failed 'interrupted' status.",
        ),
    ),
    "replica_timeout": _Flag(
        float,
        typer.Option(
            Durability.replica_timeout,
            help="Database store: a replica without a heartbeat for this many seconds is "
            "dead, and another one fails its running tasks.",
        ),
    ),
    "fanout": _Flag(
        str,
        typer.Option(
            Durability.fanout,
            help="Live tasks shared between replicas: auto (through the PostgreSQL task "
            "store when it is one), postgresql, redis://host:6379/0, or none.",
        ),
    ),
    "keep_tasks": _Flag(
        int,
        typer.Option(
            Durability.keep_tasks,
            help="In-memory store: finished tasks kept for tasks/get (oldest dropped).",
        ),
    ),
    "keep_task_mb": _Flag(
        int,
        typer.Option(
            Durability.keep_task_mb,
            help="In-memory store: the most memory the kept tasks may take, in MiB "
            "(oldest dropped).",
        ),
    ),
    "max_request_bytes": _Flag(
        int, typer.Option(Limits.max_request_bytes, help="Largest accepted request body.")
    ),
    "max_header_bytes": _Flag(
        int,
        typer.Option(
            Limits.max_header_bytes,
            help="Largest request head (request line and headers; gRPC: a call's metadata); "
            "a larger one gets HTTP 431 and the connection closes.",
        ),
    ),
    "max_header_lines": _Flag(
        int,
        typer.Option(
            Limits.max_header_lines,
            help="Header lines a request head may have (gRPC: metadata entries); more get 431.",
        ),
    ),
    "adk_keys": _Flag(
        bool,
        typer.Option(
            True,
            "--adk-keys/--no-adk-keys",
            help="Also write adk_type / adk_thought (trpc default).",
        ),
    ),
    "graph_events": _Flag(
        list[str] | None,
        typer.Option(
            None,
            "--graph-events",
            help="graph.* object types that may cross (exact, prefix*, *suffix, *); repeatable. "
            "Default: graph.execution, as trpc-agent-go.",
        ),
    ),
    "structured_errors": _Flag(
        bool,
        typer.Option(
            True,
            "--structured-errors/--generic-errors",
            help="Failed status with error metadata, or trpc's default generic error message.",
        ),
    ),
    "push": _Flag(
        bool,
        typer.Option(True, "--push/--no-push", help="Push notifications to webhooks."),
    ),
    "push_allow_host": _Flag(
        list[str] | None,
        typer.Option(
            None,
            "--push-allow-host",
            help="Webhook hosts allowed (fnmatch, e.g. '*.example.com'); repeatable. "
            "Default: any public host; private and loopback addresses never.",
        ),
    ),
    "push_allow_loopback": _Flag(
        bool,
        typer.Option(
            False, "--push-allow-loopback", help="Also allow webhooks on loopback (tests)."
        ),
    ),
    "card_signing_key": _Flag(
        str,
        typer.Option(
            "",
            "--card-signing-key",
            help="PEM private key (RSA, EC or Ed25519) that signs the agent card (A2A 1.0 "
            "card signatures; its public key is served at /.well-known/jwks.json), re-read "
            "when the file changes (rotation without a restart; replicas share it).",
        ),
    ),
    "push_signing_key": _Flag(
        str,
        typer.Option(
            "",
            "--push-signing-key",
            help="PEM private key that signs push-notification JWTs, re-read when the file "
            "changes (rotation without a restart; replicas share it). Default: keys "
            "generated in memory, rotated every --push-key-rotation seconds.",
        ),
    ),
    "push_key_rotation": _Flag(
        float,
        typer.Option(
            PushOptions.key_rotation,
            help="Seconds between rotations of generated push-signing keys; 0 = never.",
        ),
    ),
    "redact": _Flag(
        bool,
        typer.Option(
            True,
            "--redact/--no-redact",
            help="Mask secrets (API keys, tokens, private keys) in what the bridge writes for "
            "its callers: tfrs progress, ACP records and wire log, spans, logs.",
        ),
    ),
    "redact_pattern": _Flag(
        list[str] | None,
        typer.Option(
            None,
            "--redact-pattern",
            help="Another regular expression to mask (besides the built-in credential "
            "formats); repeatable.",
        ),
    ),
    "redact_hook": _Flag(
        str,
        typer.Option(
            "",
            "--redact-hook",
            help="package.module:function (str -> str) applied after the patterns.",
        ),
    ),
    "header_timeout": _Flag(
        float,
        typer.Option(
            Limits.header_timeout,
            help="Seconds for a request head to arrive (else 408 and the connection closes).",
        ),
    ),
    "body_timeout": _Flag(
        float,
        typer.Option(
            Limits.body_timeout, help="Seconds for a whole request body to arrive (else 408)."
        ),
    ),
    "keep_alive": _Flag(
        int,
        typer.Option(
            Limits.keep_alive, help="Seconds an idle HTTP keep-alive connection stays open."
        ),
    ),
    "max_connections": _Flag(
        int,
        typer.Option(
            Limits.max_connections,
            help="Concurrent HTTP connections (streams included); more get HTTP 503.",
        ),
    ),
    "run_timeout": _Flag(
        float,
        typer.Option(
            Limits.run_timeout,
            help="Seconds an agent run may take before it is cancelled and fails; 0 = no limit.",
        ),
    ),
    "playground": _Flag(
        bool,
        typer.Option(
            True,
            "--playground/--no-playground",
            help="Serve the chat page (AG-UI playground) at GET / of the HTTP port.",
        ),
    ),
    "strict_card": _Flag(
        bool,
        typer.Option(
            False,
            "--strict-card",
            help="Serve agent-card.json to requests without A2A-Version as the A2A 1.0 card "
            "alone, valid against the 1.0 JSON schema (strict 1.0 validators, the TCK's card "
            "test); A2A 0.3 clients then cannot read it. Off: the 1.0 card merged with the "
            "0.3 fields (url, preferredTransport, …), which 0.3 and 1.0 clients all read.",
        ),
    ),
    "metrics_port": _Flag(
        int,
        typer.Option(
            -1,
            help="Serve /metrics (Prometheus text), /healthz and /readyz on this port of "
            "their own; 0 = any free port, -1 = none.",
        ),
    ),
    "metrics_path": _Flag(
        bool,
        typer.Option(
            False,
            "--metrics-path/--no-metrics-path",
            help="Also serve /metrics (Prometheus text) on the HTTP port, behind the "
            "server's authentication (--auth) like every other route.",
        ),
    ),
    "metrics_public": _Flag(
        bool,
        typer.Option(
            False,
            "--metrics-public/--no-metrics-public",
            help="With --metrics-path: /metrics on the HTTP port without credentials (a "
            "scraper that cannot authenticate). The metrics port never asks for any.",
        ),
    ),
    "log_format": _Flag(
        str,
        typer.Option(
            "text",
            help="text (plain lines for a terminal) or json (one JSON object per line, with "
            "trace_id, span_id, task_id and transport).",
        ),
    ),
    "access_log": _Flag(
        bool | None,
        typer.Option(
            None,
            "--access-log/--no-access-log",
            help="One line per request (method, path, status, duration, bytes). "
            "Default: on with --log-format json, off with text.",
        ),
    ),
    "trace_view": _Flag(
        bool | None,
        typer.Option(
            None,
            "--trace-view/--no-trace-view",
            help="Keep recent spans in memory for the playground's trace waterfall, and "
            "take other processes' OTLP/HTTP span exports at /v1/traces. Default: on when "
            "bound to a loopback address with the playground on.",
        ),
    ),
    "unready_delay": _Flag(
        float,
        typer.Option(
            0.0,
            help="Seconds between SIGTERM failing /readyz (and gRPC health) and the server "
            "refusing new work: time for a load balancer to stop sending any.",
        ),
    ),
    **SECURITY_FLAGS,
}


def install_ops(options: ServerOptions, flags: dict[str, Any]) -> ServerOptions:
    """What the flags set up for the whole process before serving: the log format, the
    meter provider (and its Prometheus text when scraped); and the playground's span
    buffer, which the server adds to the global tracer provider when it starts.
    ``options`` with the pieces that need them."""
    from trpc_bridge.telemetry.logs import setup_logging
    from trpc_bridge.telemetry.metrics_setup import setup_metrics

    setup_logging(flags["log_format"], access_log=options.ops.access_log)
    scraped = options.ops.metrics_path or options.ops.metrics_port is not None
    metrics = setup_metrics(prometheus=scraped)
    buffer = None
    trace_view: bool | None = flags["trace_view"]
    if trace_view is None:
        trace_view = options.playground and is_loopback(options.host)
    if trace_view:
        from trpc_bridge.telemetry.span_buffer import SpanBuffer

        buffer = SpanBuffer()
    ops = dataclasses.replace(
        options.ops,
        prometheus=metrics.registry,
        span_buffer=buffer,
        global_span_buffer=buffer is not None,
    )
    return dataclasses.replace(options, ops=ops)


def server_command(command: Callable[..., None]) -> Callable[..., None]:
    """``command(options: ServerOptions, **own_flags)`` as a Typer command that also takes
    every flag of :data:`SERVER_FLAGS`."""
    own = [p for p in inspect.signature(command).parameters.values() if p.name != "options"]
    shared = [
        inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=flag.option, annotation=flag.annotation
        )
        for name, flag in SERVER_FLAGS.items()
    ]

    @functools.wraps(command)
    def with_flags(**values: Any) -> None:
        flags = {name: values.pop(name) for name in SERVER_FLAGS}
        try:
            options = server_options(flags)
        except FlagError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        command(options=install_ops(options, flags), **values)

    # Typer reads the signature and the type hints (resolved in the command's module).
    with_flags.__signature__ = inspect.Signature(own + shared)  # type: ignore[attr-defined]
    own_hints = {k: v for k, v in command.__annotations__.items() if k != "options"}
    with_flags.__annotations__ = own_hints | {n: f.annotation for n, f in SERVER_FLAGS.items()}
    return with_flags


#: Allocations between two collections of the youngest generation in a server (CPython's
#: default: 700).
GC_YOUNG = 7000


def run_until_interrupted(main: Coroutine[Any, Any, None]) -> None:
    """Run a server until Ctrl-C; a port that cannot be bound is one line and exit 1, a
    task store that cannot be used (or a ``TRPC_BRIDGE_LOOP`` that names no usable loop)
    one line and exit 2, and so does a signing key file that cannot be used."""
    import contextlib
    import gc

    from trpc_bridge.cli.event_loop import LoopError, run
    from trpc_bridge.server.signing.keys import SigningKeyError
    from trpc_bridge.server.tasks.store import TaskStoreError

    # Everything imported so far lives as long as the process: out of the collector's
    # sight, a full collection no longer rescans those ~100k objects (during a 10k-delta
    # stream, full collections had been a large share of the server's CPU).
    gc.freeze()
    # A request allocates thousands of short-lived objects (frames, events, protobuf
    # messages): at CPython's 700 the youngest generation was collected several times per
    # request. Every GC_YOUNG allocations takes ~2 % of a proxied stream's instructions away
    # (bench/stream_instructions.py); garbage without cycles is freed at once as before.
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG, older, oldest)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            run(main)
    except (TaskStoreError, LoopError, SigningKeyError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    except OSError as exc:  # a port in use, an address not on this host
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
