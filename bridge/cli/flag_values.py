"""From the serving flags' values to one :class:`~trpc_bridge.server.ServerOptions`:
every value checked first (a value that cannot be served is one line naming its flag,
:class:`FlagError`), then grouped into the option types; a group whose fields are named
as its flags (limits, durability, security) is filled by name."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, TypeVar

from trpc_bridge.server.auth.options import SecurityOptions
from trpc_bridge.server.options import (
    Durability,
    EncodingOptions,
    Limits,
    OpsOptions,
    PushOptions,
    PushPolicy,
    ServerOptions,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

#: Flags that must be above zero (``run_timeout`` may be 0: no limit).
_POSITIVE = (
    "header_timeout",
    "body_timeout",
    "keep_alive",
    "max_connections",
    "max_header_bytes",
    "max_header_lines",
    "keep_tasks",
    "keep_task_mb",
)


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
    """``ServerOptions`` from the values of the serving flags (``server_flags``); raises
    :class:`FlagError` for a value that cannot be served."""
    from trpc_bridge.codecs.encoding import EncodeOptions, parse_negotiation
    from trpc_bridge.redaction import policy_of
    from trpc_bridge.server.auth.options import SecurityConfigError
    from trpc_bridge.telemetry.logs import LOG_FORMATS

    try:
        policy = parse_negotiation(flags["negotiation"])
    except ValueError as exc:
        raise FlagError(f"--negotiation: {exc}") from None
    grpc_port: int = flags["grpc_port"]
    _check_ports(flags["port"], grpc_port)
    for name in _POSITIVE:
        if flags[name] <= 0:
            raise FlagError(f"--{name.replace('_', '-')} must be above 0, not {flags[name]}")
    try:
        policy_of_flags = policy_of(
            enabled=flags["redact"],
            extra_patterns=tuple(flags["redact_pattern"] or ()),
            hook=flags["redact_hook"],
        )
    except ValueError as exc:
        raise FlagError(str(exc)) from None
    if flags["push_key_rotation"] < 0:
        raise FlagError(
            f"--push-key-rotation must be 0 (never) or more, not {flags['push_key_rotation']}"
        )
    if flags["run_timeout"] < 0:
        raise FlagError(f"--run-timeout must be 0 (no limit) or more, not {flags['run_timeout']}")
    if flags["log_format"] not in LOG_FORMATS:
        raise FlagError(f"--log-format {flags['log_format']}: use text or json")
    if not -1 <= flags["metrics_port"] <= _MAX_PORT:
        raise FlagError(f"--metrics-port {flags['metrics_port']} is not a TCP port (-1 = none)")
    if flags["metrics_public"] and not flags["metrics_path"]:
        raise FlagError("--metrics-public goes with --metrics-path (/metrics on the HTTP port)")
    if flags["unready_delay"] < 0:
        raise FlagError(f"--unready-delay must be 0 or more, not {flags['unready_delay']}")
    security = _same_named(SecurityOptions, flags)
    try:
        security.check(flags["host"])
    except SecurityConfigError as exc:
        raise FlagError(str(exc)) from None
    return ServerOptions(
        host=flags["host"],
        port=flags["port"],
        grpc_port=None if grpc_port < 0 else grpc_port,
        playground=flags["playground"],
        strict_card=flags["strict_card"],
        card_signing_key=flags["card_signing_key"],
        redaction=policy_of_flags,
        ops=OpsOptions(
            metrics_path=flags["metrics_path"],
            metrics_public=flags["metrics_public"],
            metrics_port=None if flags["metrics_port"] < 0 else flags["metrics_port"],
            access_log=_access_log(flags),
            unready_delay=flags["unready_delay"],
        ),
        limits=_same_named(Limits, flags),
        durability=_same_named(Durability, flags),
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
            signing_key=flags["push_signing_key"],
            key_rotation=flags["push_key_rotation"],
        ),
        security=security,
    )


_Options = TypeVar("_Options", bound="DataclassInstance")


def _same_named(kind: type[_Options], flags: dict[str, Any]) -> _Options:
    """``kind`` (an options dataclass) with every field that a flag of the same name
    sets taken from it; the others keep their defaults."""
    fields = dataclasses.fields(kind)
    return kind(**{f.name: flags[f.name] for f in fields if f.name in flags})


def _access_log(flags: dict[str, Any]) -> bool:
    chosen: bool | None = flags["access_log"]
    return flags["log_format"] == "json" if chosen is None else chosen
