"""``--auth mtls --tls-client-ca FILE``: the client certificate is the credential.

The TLS handshake already verified the certificate against the client CA on both ports
(:mod:`.tls`); this names its holder. The user id is the certificate's first URI
subject alternative name (a SPIFFE id in a service mesh), else its first DNS name, else
its first e-mail address, else its subject's common name. A certificate that names no one
is authenticated but cannot be served: 403.
"""

from __future__ import annotations

from cryptography import x509
from cryptography.x509.oid import NameOID

from trpc_bridge.server.auth.authenticator import REALM, checked_user_id
from trpc_bridge.server.auth.errors import Forbidden, Unauthenticated
from trpc_bridge.server.auth.presented import Presented
from trpc_bridge.server.auth.principal import Principal, Scheme


def certificate_identity(pem: str) -> str:
    """Who a (verified) PEM certificate names, by the rule of the module doc; empty when
    it names no one."""
    certificate = x509.load_pem_x509_certificate(pem.encode("ascii"))
    try:
        names: x509.SubjectAlternativeName | None = certificate.extensions.get_extension_for_class(
            x509.SubjectAlternativeName
        ).value
    except x509.ExtensionNotFound:
        names = None
    if names is not None:
        for kind in (x509.UniformResourceIdentifier, x509.DNSName, x509.RFC822Name):
            found = names.get_values_for_type(kind)
            if found:
                return str(found[0])
    common = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(common[0].value) if common else ""


class ClientCertificate:
    scheme = Scheme.MTLS

    def __init__(self) -> None:
        # One certificate per connection, many requests: its identity is remembered.
        self._names: dict[str, str] = {}

    async def authenticate(self, presented: Presented) -> Principal:
        pem = presented.peer_certificate
        if not pem:  # the port asks for one; a listener without TLS gets here
            raise Unauthenticated("a client certificate is required", error="")
        name = self._names.get(pem)
        if name is None:
            try:
                name = certificate_identity(pem)
            except ValueError:
                raise Forbidden("the client certificate cannot be read") from None
            if len(self._names) >= 4096:
                self._names.clear()
            self._names[pem] = name
        return Principal(checked_user_id(name, "client certificate"), Scheme.MTLS)

    def challenge(self, refusal: Unauthenticated) -> str:
        return f'Mutual-TLS realm="{REALM}"'

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass
