"""How the client checks the servers it calls, and the certificate it shows them.

Certificates are always verified (the system's CAs), against ``ca_file`` instead for a
private CA (``call --ca-file``). ``cert_file`` / ``key_file`` (``call --cert/--key``) are
the client's own certificate chain and key, presented to a server that asks for one (a
bridge served with ``--auth mtls``): on HTTP (JSON-RPC, REST, the card) and on gRPC.

gRPC endpoints are ``host:port`` in the card, with no scheme: a card fetched over
``https`` says the agent serves TLS, so its gRPC channel is a TLS channel too (the bridge
serves both ports from the same certificate).

The files are read once, when the client connects: a file that cannot be used is a
:class:`~trpc_bridge.client.errors.RemoteAgentError` naming it (never its content).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import grpc
import httpx

from trpc_bridge.client.errors import RemoteAgentError


def _no_passphrase() -> str:
    # Without this, OpenSSL would ask for an encrypted key's passphrase on the terminal
    # (and a proxy would hang at start).
    raise ValueError("encrypted")


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise RemoteAgentError(f"cannot read the {what} {path}: {exc.strerror}") from None


@dataclass(frozen=True)
class ClientTls:
    #: A PEM bundle of the CAs to trust instead of the system's (empty: the system's).
    ca_file: str = ""
    #: The client's certificate chain (PEM, leaf first); empty: no client certificate.
    cert_file: str = ""
    #: Its private key (PEM, not encrypted); empty: in ``cert_file`` after the chain.
    key_file: str = ""

    def __post_init__(self) -> None:
        if self.key_file and not self.cert_file:
            raise RemoteAgentError("a client key was given without its certificate")

    @cached_property
    def _context(self) -> ssl.SSLContext | None:
        if not self.ca_file and not self.cert_file:
            return None
        if self.ca_file:
            _read(self.ca_file, "CA file")  # says "cannot read", not an SSL error number
        try:
            context = ssl.create_default_context(cafile=self.ca_file or None)
        except ssl.SSLError:
            raise RemoteAgentError(f"no CA certificate in {self.ca_file}") from None
        if self.cert_file:
            _read(self.cert_file, "client certificate")
            if self.key_file:
                _read(self.key_file, "client key")
            try:
                context.load_cert_chain(
                    self.cert_file, self.key_file or None, password=_no_passphrase
                )
            except (ssl.SSLError, ValueError):
                raise RemoteAgentError(
                    f"the client certificate {self.cert_file} and key "
                    f"{self.key_file or '(in the same file)'} cannot be used: a PEM chain and "
                    "its unencrypted private key are needed"
                ) from None
        return context

    def check(self) -> None:
        """Read the files now; raises :class:`RemoteAgentError` for one that cannot be
        used."""
        _ = self._context

    def httpx_verify(self) -> ssl.SSLContext | bool:
        """``httpx``'s ``verify`` (never off), with the client certificate loaded."""
        return self._context or True

    def ssl_context(self) -> ssl.SSLContext:
        """The context httpx verifies with (for a client that is not httpx)."""
        return httpx.create_ssl_context(verify=self.httpx_verify())

    def channel_factory(self, secure: bool) -> Callable[[str], grpc.aio.Channel]:
        """How to open a gRPC channel to a card's ``host:port``; ``secure``: the card came
        over ``https``."""
        if not secure:

            def plain_channel(target: str) -> grpc.aio.Channel:
                return grpc.aio.insecure_channel(target)

            return plain_channel
        self.check()
        chain = _read(self.cert_file, "client certificate") if self.cert_file else None
        key = _read(self.key_file, "client key") if self.key_file else chain
        credentials = grpc.ssl_channel_credentials(
            root_certificates=_read(self.ca_file, "CA file") if self.ca_file else None,
            private_key=key,
            certificate_chain=chain,
        )

        def secure_channel(target: str) -> grpc.aio.Channel:
            return grpc.aio.secure_channel(target, credentials)

        return secure_channel
