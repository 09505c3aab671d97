"""The credential, TLS and card-trust flags of the commands that call an agent (``call``,
and ``proxy`` for its upstream, with ``--upstream-`` in front of each name): one table,
one way to read it.

Tokens and secrets are best given through the environment or a file: a value on the
command line is visible to every user of the machine (``ps``).
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import typer

from trpc_bridge.client.card_trust import CardTrust
from trpc_bridge.client.credentials import CredentialOptions
from trpc_bridge.client.errors import RemoteAgentError
from trpc_bridge.client.tls import ClientTls


@dataclass(frozen=True)
class _Flag:
    name: str
    annotation: Any
    default: Any
    help: str
    #: The environment variable that gives it too (``TRPC_BRIDGE_`` + ``env``).
    env: str = ""


_FLAGS = (
    _Flag("token", str, "", "Bearer token sent with every request.", "TOKEN"),
    _Flag("token_file", str, "", "File holding the token; read again when it changes."),
    _Flag("client_id", str, "", "OAuth 2.0 client id: client-credentials tokens, refreshed."),
    _Flag(
        "client_secret_file",
        str,
        "",
        "File holding the client secret (or {env_prefix}CLIENT_SECRET).",
    ),
    _Flag(
        "token_url",
        str,
        "",
        "OAuth 2.0 token endpoint; default: found through the card's securitySchemes.",
    ),
    _Flag("scope", list[str] | None, None, "OAuth 2.0 scope to ask for; repeatable."),
    _Flag("audience", str, "", "Audience to ask the token endpoint for (if it needs one)."),
    _Flag(
        "card_key",
        str,
        "",
        "The card must be signed by this key (PEM public key or certificate, JWK, JWKS).",
    ),
    _Flag("card_jwks", str, "", "The card must be signed by a key of this JWKS URL."),
    _Flag(
        "ca_file",
        str,
        "",
        "Trust the CAs in this PEM file (a private CA) instead of the system's; "
        "certificates are always verified.",
    ),
    _Flag(
        "cert",
        str,
        "",
        "Client certificate chain (PEM) for servers that ask for one (--auth mtls), "
        "on every transport.",
    ),
    _Flag("key", str, "", "The client certificate's private key (PEM; default: in {flags}cert)."),
)
#: The parameters the wrapped command gets instead of the flags.
_READ = ("credentials", "card_trust", "tls")


def credential_parameters(prefix: str = "") -> dict[str, tuple[Any, Any]]:
    """``{parameter name: (annotation, typer option)}`` for a command's signature."""
    env_prefix = "TRPC_BRIDGE_" + prefix.upper().replace("-", "_")
    params = {}
    for flag in _FLAGS:
        name = prefix.replace("-", "_") + flag.name
        option = typer.Option(
            flag.default,
            "--" + name.replace("_", "-"),
            help=flag.help.format(env_prefix=env_prefix, flags="--" + prefix),
            envvar=env_prefix + flag.env if flag.env else None,
            show_default=False,
        )
        params[name] = (flag.annotation, option)
    return params


def read_credentials(values: dict[str, Any], prefix: str = "") -> CredentialOptions:
    """The options ``values`` (the command's arguments) hold; the client secret from
    ``TRPC_BRIDGE_[UPSTREAM_]CLIENT_SECRET`` when no file is given. Raises ``ValueError``
    for options that do not go together."""
    key = prefix.replace("-", "_")
    secret_env = "TRPC_BRIDGE_" + key.upper() + "CLIENT_SECRET"
    options = CredentialOptions(
        token=values[key + "token"],
        token_file=values[key + "token_file"],
        client_id=values[key + "client_id"],
        client_secret="" if values[key + "client_secret_file"] else os.environ.get(secret_env, ""),
        client_secret_file=values[key + "client_secret_file"],
        token_url=values[key + "token_url"],
        scopes=tuple(values[key + "scope"] or ()),
        audience=values[key + "audience"],
    )
    options.check()
    return options


def read_card_trust(values: dict[str, Any], prefix: str = "") -> CardTrust | None:
    """The card keys ``values`` name; ``None`` for none. Raises ``RemoteAgentError``
    for a key file that cannot be used."""
    key = prefix.replace("-", "_")
    path, url = values[key + "card_key"], values[key + "card_jwks"]
    if not path and not url:
        return None
    pinned = CardTrust.from_file(path).keys if path else ()
    return CardTrust(keys=pinned, jwks_url=url)


def read_tls(values: dict[str, Any], prefix: str = "") -> ClientTls:
    """The CAs and client certificate ``values`` name, read now. Raises
    ``RemoteAgentError`` for a file that cannot be used."""
    key = prefix.replace("-", "_")
    tls = ClientTls(values[key + "ca_file"], values[key + "cert"], values[key + "key"])
    tls.check()
    return tls


def credential_command(prefix: str = "") -> Callable[[Callable[..., None]], Callable[..., None]]:
    """``command(credentials: CredentialOptions, card_trust: CardTrust | None,
    tls: ClientTls, **own)`` as a command that also takes the flags above (``prefix`` in
    front of each name). Options that do not go together, or an unusable card key or
    certificate, are one line on stderr and exit 2."""
    params = credential_parameters(prefix)

    def wrap(command: Callable[..., None]) -> Callable[..., None]:
        own = [p for p in inspect.signature(command).parameters.values() if p.name not in _READ]
        added = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=opt, annotation=ann)
            for name, (ann, opt) in params.items()
        ]

        @functools.wraps(command)
        def with_flags(**values: Any) -> None:
            flags = {name: values.pop(name) for name in params}
            try:
                credentials = read_credentials(flags, prefix)
                card_trust = read_card_trust(flags, prefix)
                tls = read_tls(flags, prefix)
            except (ValueError, RemoteAgentError) as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(2) from None
            command(credentials=credentials, card_trust=card_trust, tls=tls, **values)

        with_flags.__signature__ = inspect.Signature(own + added)  # type: ignore[attr-defined]
        hints = {k: v for k, v in command.__annotations__.items() if k not in _READ}
        with_flags.__annotations__ = hints | {n: ann for n, (ann, _) in params.items()}
        return with_flags

    return wrap
