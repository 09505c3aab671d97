"""Credentials on the way out: where the token a client sends comes from.

A :class:`TokenSource` gives the current token (``""``: none). The sources:

- :class:`StaticToken`: ``--token`` or an environment variable;
- :class:`TokenFile`: ``--token-file``, read again whenever the file changes (a mounted
  secret or a Kubernetes projected token is replaced in place while the client runs);
- :class:`ClientCredentials`: OAuth 2.0 client credentials (RFC 6749 §4.4): a token from
  the token endpoint, kept until shortly before it expires (the larger of 30 s and a
  tenth of its lifetime) and then fetched again, one request at a time however many
  calls wait for it. The client authenticates with HTTP Basic (``client_secret_basic``,
  the default of OpenID providers). The token endpoint is given (``--token-url``) or
  found through the card's ``securitySchemes``: an OAuth 2.0 scheme's client-credentials
  ``tokenUrl``, or an OpenID Connect scheme's discovery document (``token_endpoint``);
- :class:`ForwardedToken`: the bearer token of the request being served, for a proxy
  that forwards its caller's credential (``AgentRequest.caller_token``).

A client secret goes where the card says only when the caller allowed it: a token URL
found on the card must be ``https`` (or on loopback), since the card's author chooses
it. Pin it with ``--token-url`` when the card is not trusted (or check the card's
signature, :mod:`~trpc_bridge.client.card_trust`).

No token, secret or token response ever appears in an error message or a log line.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
from a2a.client.card_resolver import parse_agent_card
from google.protobuf.json_format import ParseError

from trpc_bridge.addresses import is_loopback
from trpc_bridge.client.card import ResolvedCard
from trpc_bridge.client.errors import RemoteAgentError, RemoteCallError, failure_text

#: A token is fetched again this long before it expires, at least (see the module doc).
REFRESH_MARGIN = 30.0
#: Assumed lifetime of a token whose response gives no ``expires_in``.
DEFAULT_LIFETIME = 300.0


class CredentialError(RemoteCallError):
    """A token could not be had (a token endpoint that refuses, a file that is gone);
    the message says why, without a secret."""


class TokenSource(Protocol):
    async def token(self) -> str:
        """The token to send now; ``""`` for none. Raises :class:`CredentialError`."""
        ...


@dataclass(frozen=True)
class StaticToken:
    value: str

    async def token(self) -> str:
        return self.value


class TokenFile:
    """The token in ``path`` (surrounding whitespace stripped), re-read when it changes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._state: tuple[int, int, int] | None = None
        self._value = ""

    async def token(self) -> str:
        try:
            st = os.stat(self.path)
            state = (st.st_mtime_ns, st.st_size, st.st_ino)
            if state != self._state:
                self._value = self.path.read_text(encoding="utf-8").strip()
                self._state = state
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise CredentialError(f"cannot read token file {self.path}: {reason}") from None
        return self._value


@dataclass(frozen=True)
class ForwardedToken:
    """The caller's bearer token, read per request (see :class:`RemoteAgent`)."""


class ClientCredentials:
    """OAuth 2.0 client credentials from ``token_url`` (see the module doc)."""

    def __init__(
        self,
        token_url: str,
        client_id: str,
        client_secret: str,
        *,
        http: httpx.AsyncClient,
        scopes: Sequence[str] = (),
        audience: str = "",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.token_url = token_url
        self.client_id = client_id
        self._secret = client_secret
        self._http = http
        self.scopes = tuple(scopes)
        self.audience = audience
        self._clock = clock
        self._token = ""
        self._refresh_at = 0.0
        self._lock = asyncio.Lock()
        #: Token requests made (tests and operators can tell caching works).
        self.fetches = 0

    async def token(self) -> str:
        if self._token and self._clock() < self._refresh_at:
            return self._token
        async with self._lock:  # one request, however many calls wait for a token
            if not self._token or self._clock() >= self._refresh_at:
                await self._fetch()
        return self._token

    async def _fetch(self) -> None:
        form = {"grant_type": "client_credentials"}
        if self.scopes:
            form["scope"] = " ".join(self.scopes)
        if self.audience:
            # ``audience`` (Auth0, Okta, …) and, for an absolute URI, RFC 8707's
            # ``resource`` (OpenID providers such as oidc-provider): who reads the token.
            form["audience"] = self.audience
            if "://" in self.audience:
                form["resource"] = self.audience
        where = f"token endpoint {self.token_url}"
        try:
            response = await self._http.post(
                self.token_url,
                data=form,
                auth=httpx.BasicAuth(self.client_id, self._secret),
                headers={"Accept": "application/json"},
            )
        except httpx.HTTPError as exc:
            raise CredentialError(f"{where}: {failure_text(exc)}") from None
        try:
            answer: Any = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise CredentialError(f"{where}: HTTP {response.status_code}, not a JSON object")
        if response.status_code != 200 or not isinstance(answer.get("access_token"), str):
            # RFC 6749 §5.2: ``error`` is a code, ``error_description`` meant for humans.
            error = str(answer.get("error") or f"HTTP {response.status_code}")[:100]
            detail = str(answer.get("error_description") or "")[:200]
            raise CredentialError(
                f"{where} refused client {self.client_id!r}: {error}"
                + (f" ({detail})" if detail else "")
            )
        lifetime = answer.get("expires_in")
        seconds = float(lifetime) if isinstance(lifetime, int | float) else DEFAULT_LIFETIME
        self._token = answer["access_token"]
        self._refresh_at = self._clock() + seconds - max(REFRESH_MARGIN, seconds / 10)
        self.fetches += 1


@dataclass(frozen=True)
class CredentialOptions:
    """What the caller gave (CLI flags, environment, library arguments); at most one
    source: a token, a token file, or a client id with its secret."""

    token: str = ""
    token_file: str = ""
    client_id: str = ""
    client_secret: str = ""
    client_secret_file: str = ""
    #: Pins the token endpoint; empty = found through the card's ``securitySchemes``.
    token_url: str = ""
    scopes: tuple[str, ...] = field(default_factory=tuple)
    audience: str = ""

    def check(self) -> None:
        """Raises :class:`ValueError` naming the options that do not go together."""
        given = [
            name
            for name, value in (
                ("a token", self.token),
                ("a token file", self.token_file),
                ("a client id", self.client_id),
            )
            if value
        ]
        if len(given) > 1:
            raise ValueError(f"give one credential, not {' and '.join(given)}")
        secret = self.client_secret or self.client_secret_file
        if self.client_id and not secret:
            raise ValueError("a client id needs its secret (a secret file or the variable)")
        if secret and not self.client_id:
            raise ValueError("a client secret needs its client id")

    @property
    def empty(self) -> bool:
        return not (self.token or self.token_file or self.client_id)


async def token_source(
    options: CredentialOptions, card: ResolvedCard, http: httpx.AsyncClient
) -> TokenSource | None:
    """The source ``options`` describe, for the agent whose card is ``card``. Raises
    :class:`RemoteAgentError` when the options cannot be used with this card."""
    try:
        options.check()
    except ValueError as exc:
        raise RemoteAgentError(str(exc)) from None
    if options.token:
        return StaticToken(options.token)
    if options.token_file:
        source = TokenFile(options.token_file)
        await source.token()  # a missing file is an error now, not at the first call
        return source
    if not options.client_id:
        return None
    secret = options.client_secret
    if options.client_secret_file:
        try:
            secret = Path(options.client_secret_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            raise RemoteAgentError(
                f"cannot read client secret file {options.client_secret_file}"
            ) from None
    token_url = options.token_url or await discover_token_url(card, http)
    return ClientCredentials(
        token_url,
        options.client_id,
        secret,
        http=http,
        scopes=options.scopes,
        audience=options.audience,
    )


async def discover_token_url(card: ResolvedCard, http: httpx.AsyncClient) -> str:
    """The client-credentials token endpoint the card's ``securitySchemes`` name (1.0 or
    0.3 form). Raises :class:`RemoteAgentError` when the card names none, or one that is
    neither ``https`` nor on loopback."""
    try:
        schemes = parse_agent_card(dict(card.raw)).security_schemes
    except (ParseError, ValueError):
        schemes = {}
    found = ""
    for scheme in schemes.values():
        if scheme.HasField("oauth2_security_scheme"):
            flows = scheme.oauth2_security_scheme.flows
            if flows.HasField("client_credentials") and flows.client_credentials.token_url:
                found = flows.client_credentials.token_url
                break
        if scheme.HasField("open_id_connect_security_scheme"):
            discovery = scheme.open_id_connect_security_scheme.open_id_connect_url
            _check_secret_destination(discovery, card)
            found = await _oidc_token_endpoint(discovery, http)
            break
    if not found:
        raise RemoteAgentError(
            f"{card.name}: the card declares no OAuth 2.0 client-credentials or OpenID "
            "Connect scheme: give the token URL"
        )
    _check_secret_destination(found, card)
    return found


def _check_secret_destination(url: str, card: ResolvedCard) -> None:
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname or "")):
        return
    raise RemoteAgentError(
        f"{card.name}: the card's token endpoint {url} is not https: the client secret is "
        "not sent there (give the token URL to use it anyway)"
    )


async def _oidc_token_endpoint(discovery: str, http: httpx.AsyncClient) -> str:
    try:
        response = await http.get(discovery)
        document = response.json()
    except (httpx.HTTPError, ValueError) as exc:
        raise RemoteAgentError(
            f"cannot read the OpenID configuration at {discovery}: "
            f"{failure_text(exc) if isinstance(exc, httpx.HTTPError) else 'not JSON'}"
        ) from None
    endpoint = document.get("token_endpoint") if isinstance(document, dict) else None
    if not isinstance(endpoint, str) or not endpoint:
        raise RemoteAgentError(f"the OpenID configuration at {discovery} has no token_endpoint")
    return endpoint
