"""Why a request is not let in. Each message is safe to send and to log: it never holds
any part of the credential, only what was wrong with it."""

from __future__ import annotations


class AuthError(Exception):
    """A refused credential; :attr:`message` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Unauthenticated(AuthError):
    """No usable credential: HTTP 401 with ``WWW-Authenticate``, gRPC ``UNAUTHENTICATED``.

    ``error`` is RFC 6750's ``error`` attribute of the challenge: ``invalid_token`` for a
    credential that was presented and refused, empty when none was presented (the
    challenge then only names the scheme, RFC 6750 §3.1)."""

    def __init__(self, message: str, *, error: str = "invalid_token") -> None:
        super().__init__(message)
        self.error = error


class Forbidden(AuthError):
    """A verified caller the bridge cannot serve: HTTP 403, gRPC ``PERMISSION_DENIED``."""


class CredentialMisuse(AuthError):
    """A request that presents credentials the wrong way (twice, or in the URL): a client
    error, HTTP 400, gRPC ``INVALID_ARGUMENT``, whatever the scheme."""


class Unavailable(AuthError):
    """The credential cannot be checked now (the identity provider is unreachable and no
    key is known): HTTP 503, gRPC ``UNAVAILABLE``. The client may try again."""
