"""TLS on both ports (``--tls-cert``, ``--tls-key``, ``--tls-client-ca``).

One set of files serves HTTP (an :class:`ssl.SSLContext` for uvicorn) and gRPC
(``grpc.ssl_server_credentials``). With a client CA every connection must present a
certificate that CA signed, on both ports; a certificate of another CA, or none, fails the
handshake, before any HTTP or gRPC is spoken. TLS 1.2 is the oldest version accepted.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

import grpc


class TlsConfigError(ValueError):
    """A TLS file that cannot be used; one line naming the flag and the file."""


@dataclass(frozen=True)
class TlsFiles:
    cert: str
    key: str
    #: Client certificates must be signed by this CA (PEM bundle); empty: none asked.
    client_ca: str = ""

    def _read(self, flag: str, path: str) -> bytes:
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise TlsConfigError(f"{flag} {path}: {exc.strerror or exc}") from None

    def server_context(self) -> ssl.SSLContext:
        """The HTTP port's context; raises :class:`TlsConfigError`."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            context.load_cert_chain(self.cert, self.key)
        except (OSError, ssl.SSLError) as exc:
            raise TlsConfigError(
                f"--tls-cert {self.cert} / --tls-key {self.key}: cannot be loaded ({exc})"
            ) from None
        if self.client_ca:
            try:
                context.load_verify_locations(cafile=self.client_ca)
            except (OSError, ssl.SSLError) as exc:
                raise TlsConfigError(f"--tls-client-ca {self.client_ca}: {exc}") from None
            context.verify_mode = ssl.CERT_REQUIRED
        return context

    def grpc_credentials(self) -> grpc.ServerCredentials:
        """The gRPC port's credentials (the same files)."""
        pair = (self._read("--tls-key", self.key), self._read("--tls-cert", self.cert))
        client_ca = self._read("--tls-client-ca", self.client_ca) if self.client_ca else None
        return grpc.ssl_server_credentials(
            [pair], root_certificates=client_ca, require_client_auth=client_ca is not None
        )

    def check(self) -> None:
        """Load every file once (at start: a bad file is one line, not a failed port)."""
        self.server_context()
        self.grpc_credentials()


def tls_scope_extension(transport: object) -> dict[object, object] | None:
    """The ASGI TLS extension of a connection (``scope["extensions"]["tls"]``): its
    verified client certificate (PEM) in ``client_cert_chain``; None without TLS."""
    get_extra_info = getattr(transport, "get_extra_info", None)
    ssl_object = get_extra_info("ssl_object") if get_extra_info is not None else None
    if ssl_object is None:
        return None
    der = ssl_object.getpeercert(binary_form=True)
    chain = [ssl.DER_cert_to_PEM_cert(der)] if der else []
    return {"client_cert_chain": chain, "tls_version": None, "cipher_suite": None}
