"""The flags every serving command shares (``serve``, ``proxy``), and the loop that runs a
server until Ctrl-C.

:func:`server_command` adds the flags of :data:`SERVER_FLAGS` to a command's signature and
hands the command one :class:`~trpc_bridge.server.ServerOptions` built from them, so a new
server flag is one row here and one field in ``ServerOptions``, never an edit of every
command. The server is imported lazily: ``call`` never needs it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import typer

from trpc_bridge.server.auth.options import AUTH_CHOICES, SecurityOptions
from trpc_bridge.server.options import Durability, EncodingOptions, Limits, ServerOptions


@dataclass(frozen=True)
class _Flag:
    annotation: Any
    option: Any


def _env(name: str) -> str:
    """The environment variable that sets flag ``name`` (``--auth``: TRPC_BRIDGE_AUTH)."""
    return "TRPC_BRIDGE_" + name.upper()


#: Authentication and TLS (``server/auth``, ``docs/security.md``); each also read from
#: its environment variable, so a container needs no command line.
SECURITY_FLAGS: dict[str, _Flag] = {
    "auth": _Flag(
        str,
        typer.Option(
            SecurityOptions.auth,
            envvar=_env("auth"),
            help=f"Authentication scheme: {' | '.join(AUTH_CHOICES)}. none: X-User-ID is "
            "trusted, which only a loopback --host (or --trust-user-header) allows.",
        ),
    ),
    "oidc_issuer": _Flag(
        str,
        typer.Option(
            SecurityOptions.oidc_issuer,
            envvar=_env("oidc_issuer"),
            help="--auth oidc: the OpenID provider's issuer URL (its discovery document and "
            "keys are fetched from it).",
        ),
    ),
    "audience": _Flag(
        str,
        typer.Option(
            SecurityOptions.audience,
            envvar=_env("audience"),
            help="--auth oidc: the audience (aud) a token must carry; empty = not checked.",
        ),
    ),
    "user_claim": _Flag(
        str,
        typer.Option(
            SecurityOptions.user_claim,
            envvar=_env("user_claim"),
            help="--auth oidc: the token claim that names the user.",
        ),
    ),
    "oidc_ca_file": _Flag(
        str,
        typer.Option(
            SecurityOptions.oidc_ca_file,
            envvar=_env("oidc_ca_file"),
            help="--auth oidc: CA bundle for the provider's TLS certificate (default: the "
            "system's).",
        ),
    ),
    "api_keys": _Flag(
        str,
        typer.Option(
            SecurityOptions.api_keys,
            envvar=_env("api_keys"),
            help="--auth api-key: the key file ('<user> sha256:<hex>' per line; "
            "`trpc-bridge api-key USER` makes one); re-read when it changes.",
        ),
    ),
    "tls_cert": _Flag(
        str,
        typer.Option(
            SecurityOptions.tls_cert,
            envvar=_env("tls_cert"),
            help="Serve HTTPS and gRPC over TLS with this certificate (PEM; with --tls-key).",
        ),
    ),
    "tls_key": _Flag(
        str,
        typer.Option(
            SecurityOptions.tls_key,
            envvar=_env("tls_key"),
            help="The private key of --tls-cert (PEM).",
        ),
    ),
    "tls_client_ca": _Flag(
        str,
        typer.Option(
            SecurityOptions.tls_client_ca,
            envvar=_env("tls_client_ca"),
            help="Require client certificates signed by this CA on both ports (mTLS; "
            "--auth mtls takes the user id from them).",
        ),
    ),
    "trust_user_header": _Flag(
        bool,
        typer.Option(
            SecurityOptions.trust_user_header,
            "--trust-user-header",
            envvar=_env("trust_user_header"),
            help="Take X-User-ID on trust on any interface: only behind an authenticating "
            "proxy that sets it (loopback binds do this by default).",
        ),
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
    "max_request_bytes": _Flag(
        int, typer.Option(Limits.max_request_bytes, help="Largest accepted request body.")
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
    "legacy_card": _Flag(
        bool,
        typer.Option(
            False,
            "--legacy-card",
            help="Serve agent-card.json with the A2A 0.3 fields (url, preferredTransport, …) "
            "to requests without A2A-Version, for a2a-sdk 0.3 callers (trpc-agent-python's "
            "`a2a` extra). Off: the 1.0 card, valid against the A2A 1.0 schema (the TCK).",
        ),
    ),
    **SECURITY_FLAGS,
}

#: Flags that must be above zero (``run_timeout`` may be 0: no limit).
_POSITIVE = ("header_timeout", "body_timeout", "keep_alive", "max_connections")


_MAX_PORT = 65535


class FlagError(ValueError):
    """A flag value that cannot be served: one line on stderr, exit 2."""


def _check_ports(port: int, grpc_port: int) -> None:
    if not 0 <= port <= _MAX_PORT:
        raise FlagError(f"--port {port} is not a TCP port (0-{_MAX_PORT}; 0 = any free port)")
    if not -1 <= grpc_port <= _MAX_PORT:
        raise FlagError(
            f"--grpc-port {grpc_port} is not a TCP port (0-{_MAX_PORT}; 0 = any free, -1 = off)"
        )
    if port != 0 and port == grpc_port:
        raise FlagError(f"--port and --grpc-port are both {port}: HTTP and gRPC need a port each")


def server_options(flags: dict[str, Any]) -> ServerOptions:
    """``ServerOptions`` from the values of :data:`SERVER_FLAGS`; raises
    :class:`FlagError` for a value that cannot be served."""
    from trpc_bridge.codecs.encoding import EncodeOptions, parse_negotiation
    from trpc_bridge.server.auth.options import SecurityConfigError
    from trpc_bridge.server.options import PushOptions
    from trpc_bridge.server.push.policy import PushPolicy

    try:
        policy = parse_negotiation(flags["negotiation"])
    except ValueError as exc:
        raise FlagError(f"--negotiation: {exc}") from None
    grpc_port: int = flags["grpc_port"]
    _check_ports(flags["port"], grpc_port)
    for name in _POSITIVE:
        if flags[name] <= 0:
            raise FlagError(f"--{name.replace('_', '-')} must be above 0, not {flags[name]}")
    if flags["run_timeout"] < 0:
        raise FlagError(f"--run-timeout must be 0 (no limit) or more, not {flags['run_timeout']}")
    security = SecurityOptions(**{name: flags[name] for name in SECURITY_FLAGS})
    try:
        security.check(flags["host"])
    except SecurityConfigError as exc:
        raise FlagError(str(exc)) from None
    return ServerOptions(
        host=flags["host"],
        port=flags["port"],
        grpc_port=None if grpc_port < 0 else grpc_port,
        playground=flags["playground"],
        legacy_card=flags["legacy_card"],
        limits=Limits(
            max_request_bytes=flags["max_request_bytes"],
            max_connections=flags["max_connections"],
            header_timeout=flags["header_timeout"],
            body_timeout=flags["body_timeout"],
            keep_alive=flags["keep_alive"],
            run_timeout=flags["run_timeout"],
        ),
        durability=Durability(
            task_store=flags["task_store"],
            keep_tasks=flags["keep_tasks"],
            replica_timeout=flags["replica_timeout"],
            fanout=flags["fanout"],
            shutdown_grace=flags["shutdown_grace"],
        ),
        encoding=EncodingOptions(
            negotiation=policy,
            encode=EncodeOptions(
                adk_compat=flags["adk_keys"],
                graph_allowlist=tuple(flags["graph_events"] or EncodeOptions().graph_allowlist),
                structured_errors=flags["structured_errors"],
            ),
        ),
        push=PushOptions(
            enabled=flags["push"],
            policy=PushPolicy(
                allow_hosts=tuple(flags["push_allow_host"] or ()),
                allow_loopback=flags["push_allow_loopback"],
            ),
        ),
        security=security,
    )


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
        command(options=options, **values)

    # Typer reads the signature and the type hints (resolved in the command's module).
    with_flags.__signature__ = inspect.Signature(own + shared)  # type: ignore[attr-defined]
    own_hints = {k: v for k, v in command.__annotations__.items() if k != "options"}
    with_flags.__annotations__ = own_hints | {n: f.annotation for n, f in SERVER_FLAGS.items()}
    return with_flags


def run_until_interrupted(main: Coroutine[Any, Any, None]) -> None:
    """Run a server until Ctrl-C; a port that cannot be bound is one line and exit 1, a
    task store that cannot be used (or a ``TRPC_BRIDGE_LOOP`` that names no usable loop)
    one line and exit 2."""
    import contextlib
    import gc

    from trpc_bridge.cli.event_loop import LoopError, run
    from trpc_bridge.server.tasks.store import TaskStoreError

    # Everything imported so far lives as long as the process: out of the collector's
    # sight, a full collection no longer rescans those ~100k objects (during a 10k-delta
    # stream, full collections had been a large share of the server's CPU).
    gc.freeze()
    try:
        with contextlib.suppress(KeyboardInterrupt):
            run(main)
    except (TaskStoreError, LoopError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    except OSError as exc:  # a port in use, an address not on this host
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
