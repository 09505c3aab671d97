"""How the client checks the servers it calls: certificates are always verified (the
system's CAs), against ``ca_file`` instead for a private CA (``call --ca-file``).

gRPC endpoints are ``host:port`` in the card, with no scheme: a card fetched over
``https`` says the agent serves TLS, so its gRPC channel is a TLS channel too (the bridge
serves both ports from the same certificate).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc


@dataclass(frozen=True)
class ClientTls:
    #: A PEM bundle of the CAs to trust instead of the system's (empty: the system's).
    ca_file: str = ""

    def httpx_verify(self) -> ssl.SSLContext | bool:
        """``httpx``'s ``verify``: never off."""
        return ssl.create_default_context(cafile=self.ca_file) if self.ca_file else True

    def channel_factory(self, secure: bool) -> Callable[[str], grpc.aio.Channel]:
        """How to open a gRPC channel to a card's ``host:port``; ``secure``: the card came
        over ``https``."""
        if not secure:

            def plain_channel(target: str) -> grpc.aio.Channel:
                return grpc.aio.insecure_channel(target)

            return plain_channel
        roots = Path(self.ca_file).read_bytes() if self.ca_file else None
        credentials = grpc.ssl_channel_credentials(root_certificates=roots)

        def secure_channel(target: str) -> grpc.aio.Channel:
            return grpc.aio.secure_channel(target, credentials)

        return secure_channel
