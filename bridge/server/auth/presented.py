"""What a request presents to be let in, read the same way from HTTP and gRPC.

Every occurrence of a header is kept (:meth:`Presented.one` refuses a second one), so a
proxy that appends its header instead of replacing it cannot let a client choose which
copy counts: HTTP used to take the first ``X-User-ID`` and gRPC the last. Credentials in
the URL are refused outright (:func:`screen`): URLs end up in logs and browser history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from trpc_bridge.names import USER_ID_KEY
from trpc_bridge.server.auth.errors import CredentialMisuse

AUTHORIZATION = "authorization"
API_KEY_HEADER = "x-api-key"
#: Headers that carry who the caller is: never sent twice, never passed to an agent.
CREDENTIAL_HEADERS = frozenset({AUTHORIZATION, API_KEY_HEADER, "proxy-authorization", "cookie"})
_SINGLE = frozenset({AUTHORIZATION, API_KEY_HEADER, USER_ID_KEY})
#: Query parameters that would carry a credential in a URL (RFC 6750 §2.3's
#: ``access_token`` and the usual API-key spellings), compared case-insensitively.
URL_CREDENTIALS = frozenset(
    {
        "access_token",
        "id_token",
        "token",
        "api_key",
        "apikey",
        "api-key",
        "x-api-key",
        "authorization",
        "x-user-id",
        "user_id",
    }
)


@dataclass(frozen=True)
class Presented:
    """One request's headers (or gRPC metadata; lower-case names, every occurrence), its
    query string (HTTP), and the client certificate its TLS handshake verified (PEM)."""

    headers: tuple[tuple[str, str], ...] = ()
    query: str = ""
    peer_certificate: str = ""

    def one(self, name: str) -> str | None:
        """The single value of header ``name``; None when absent. A second occurrence is
        refused (:class:`CredentialMisuse`)."""
        found: str | None = None
        for key, value in self.headers:
            if key == name:
                if found is not None:
                    raise CredentialMisuse(f"the {name} header is sent more than once")
                found = value
        return found


def from_asgi(scope: Any) -> Presented:
    """An ASGI HTTP scope's credentials; the client certificate comes from the ASGI TLS
    extension (``scope["extensions"]["tls"]["client_cert_chain"]``, which the bridge's
    HTTP listener fills)."""
    headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"])
    tls = (scope.get("extensions") or {}).get("tls") or {}
    chain = tls.get("client_cert_chain") or ()
    query = scope.get("query_string", b"")
    return Presented(headers, query.decode("latin-1"), chain[0] if chain else "")


def from_grpc(context: Any) -> Presented:
    """A gRPC call's metadata (binary ``-bin`` values skipped) and the client certificate
    of its TLS connection (gRPC's auth context)."""
    pairs: Iterable[tuple[str, Any]] = context.invocation_metadata() or ()
    headers = tuple((k.lower(), v) for k, v in pairs if isinstance(v, str))
    certificate = context.auth_context().get("x509_pem_cert") or ()
    pem = certificate[0].decode("ascii", "replace") if certificate else ""
    return Presented(headers, "", pem)


def screen(presented: Presented) -> None:
    """Refuse the misuses every scheme refuses: a credential header sent twice, a
    credential in the query string."""
    seen: set[str] = set()
    for key, _ in presented.headers:
        if key in _SINGLE:
            if key in seen:
                raise CredentialMisuse(f"the {key} header is sent more than once")
            seen.add(key)
    if presented.query:
        for name, _ in parse_qsl(presented.query, keep_blank_values=True):
            if name.lower() in URL_CREDENTIALS:
                raise CredentialMisuse(
                    f"a credential in the URL ({name!s:.40}) is refused: "
                    "send it in the Authorization header"
                )
