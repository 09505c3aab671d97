"""``SecurityOptions``: the server's authentication and TLS flags, checked together.

Who may be trusted depends on where the server listens. On a loopback interface only
programs on the same machine can connect, so with no scheme configured the ``X-User-ID``
header is taken on trust, as trpc-agent-go does (``make run`` needs no set-up). On any
other interface the server refuses to start unless a scheme (``--auth``) or an explicit
``--trust-user-header`` (an authenticating proxy in front sets the header) says who
callers are.

The serving commands read this module for their flags' defaults (``cli/server_flags.py``),
so the schemes, and what they import (JOSE, gRPC), load only when a server is built.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trpc_bridge.addresses import is_loopback

if TYPE_CHECKING:
    from trpc_bridge.server.auth.authenticator import Authenticator, AuthGate
    from trpc_bridge.server.auth.tls import TlsFiles

#: ``--auth`` values; ``none`` leaves identity to ``--trust-user-header`` (or loopback).
AUTH_CHOICES = ("none", "oidc", "api-key", "mtls")


class SecurityConfigError(ValueError):
    """Flags that cannot be served together: one line naming the flags."""


@dataclass(frozen=True)
class SecurityOptions:
    #: ``none``, ``oidc``, ``api-key`` or ``mtls`` (``--auth``).
    auth: str = "none"
    oidc_issuer: str = ""
    #: The ``aud`` a token must carry; empty: not checked (``--audience``).
    audience: str = ""
    user_claim: str = "sub"
    #: The API key file (``--api-keys``).
    api_keys: str = ""
    tls_cert: str = ""
    tls_key: str = ""
    #: Client certificates must be signed by this CA, on both ports (``--tls-client-ca``).
    tls_client_ca: str = ""
    #: Take ``X-User-ID`` on trust on any interface (``--trust-user-header``).
    trust_user_header: bool = False
    #: CA bundle for the identity provider's TLS (empty: the system's).
    oidc_ca_file: str = ""
    #: Reverse proxies (addresses or networks, comma-separated) whose ``X-Forwarded-For``
    #: and ``X-Forwarded-Proto`` name the caller in logs and metrics
    #: (``--forwarded-allow-ips``); empty: every request is the TCP peer's own.
    forwarded_allow_ips: str = ""

    @property
    def trusted_proxies(self) -> tuple[str, ...]:
        """:attr:`forwarded_allow_ips` as a list (checked by :meth:`check`)."""
        return tuple(item.strip() for item in self.forwarded_allow_ips.split(",") if item.strip())

    @property
    def tls(self) -> TlsFiles | None:
        from trpc_bridge.server.auth.tls import TlsFiles

        if not self.tls_cert:
            return None
        return TlsFiles(self.tls_cert, self.tls_key, self.tls_client_ca)

    def check(self, host: str) -> None:
        """Raise :class:`SecurityConfigError` for flags that cannot be served on ``host``
        (each file is read once, so a bad one is reported before anything listens)."""
        from trpc_bridge.server.auth.oidc import OidcConfigError, check_issuer
        from trpc_bridge.server.auth.tls import TlsConfigError

        if self.auth not in AUTH_CHOICES:
            raise SecurityConfigError(
                f"--auth {self.auth!r}: choose one of {', '.join(AUTH_CHOICES)}"
            )
        if self.auth != "none" and self.trust_user_header:
            raise SecurityConfigError(
                f"--auth {self.auth} and --trust-user-header both say who the caller is: choose one"
            )
        if bool(self.tls_cert) != bool(self.tls_key):
            raise SecurityConfigError("--tls-cert and --tls-key go together")
        if self.tls_client_ca and not self.tls_cert:
            raise SecurityConfigError("--tls-client-ca needs --tls-cert and --tls-key")
        if self.auth == "oidc" and not self.oidc_issuer:
            raise SecurityConfigError("--auth oidc needs --oidc-issuer URL")
        if self.auth == "api-key" and not self.api_keys:
            raise SecurityConfigError("--auth api-key needs --api-keys FILE")
        if self.auth == "mtls" and not self.tls_client_ca:
            raise SecurityConfigError(
                "--auth mtls needs --tls-client-ca FILE (and --tls-cert, --tls-key)"
            )
        for proxy in self.trusted_proxies:
            _check_proxy(proxy)
        if self.auth == "none" and not self.trust_user_header and not is_loopback(host):
            raise SecurityConfigError(
                f"--host {host} is reachable from other machines: choose an authentication "
                "scheme (--auth oidc|api-key|mtls) or --trust-user-header (behind an "
                "authenticating proxy that sets X-User-ID)"
            )
        try:
            if self.auth == "oidc":
                check_issuer(self.oidc_issuer)
            if self.tls is not None:
                self.tls.check()
        except (OidcConfigError, TlsConfigError) as exc:
            raise SecurityConfigError(str(exc)) from None
        if self.auth == "api-key":
            self.authenticator()  # reads the key file

    def authenticator(self) -> Authenticator:
        """The configured scheme's authenticator (call :meth:`check` first)."""
        from trpc_bridge.server.auth.api_keys import ApiKeyFile, ApiKeyFileError
        from trpc_bridge.server.auth.mtls import ClientCertificate
        from trpc_bridge.server.auth.oidc import OidcConfigError, OidcVerifier
        from trpc_bridge.server.auth.trusted_header import TrustedHeader

        try:
            if self.auth == "oidc":
                return OidcVerifier(
                    self.oidc_issuer,
                    audience=self.audience,
                    user_claim=self.user_claim,
                    ca_file=self.oidc_ca_file,
                )
            if self.auth == "api-key":
                return ApiKeyFile(self.api_keys)
        except (OidcConfigError, ApiKeyFileError) as exc:
            raise SecurityConfigError(str(exc)) from None
        if self.auth == "mtls":
            return ClientCertificate()
        return TrustedHeader()

    def gate(self) -> AuthGate:
        from trpc_bridge.server.auth.authenticator import AuthGate

        return AuthGate(self.authenticator())


def _check_proxy(proxy: str) -> None:
    """One entry of ``--forwarded-allow-ips``: an address or a network. Not ``*``: a
    header any caller can send would then name whoever it likes in the logs."""
    if proxy == "*":
        raise SecurityConfigError(
            "--forwarded-allow-ips '*' would let any caller name itself in the logs: "
            "list the reverse proxies' addresses or networks"
        )
    try:
        ipaddress.ip_network(proxy, strict=False)
    except ValueError:
        raise SecurityConfigError(
            f"--forwarded-allow-ips: {proxy!r} is not an IP address or network "
            "(e.g. 10.0.0.5 or 10.0.0.0/24)"
        ) from None
