"""Who a request was verified to come from."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Scheme(StrEnum):
    """How a :class:`Principal` was established (``--auth``; ``header``: trusted)."""

    OIDC = "oidc"
    API_KEY = "api-key"
    MTLS = "mtls"
    #: The ``X-User-ID`` header taken on trust (loopback, or ``--trust-user-header``).
    HEADER = "header"


@dataclass(frozen=True)
class Principal:
    """The caller, as the server's one authenticator verified it."""

    #: The identity tasks are owned by (the task store's ``owner``).
    user_id: str
    scheme: Scheme
    #: The bearer token it was verified from (``oidc``), for a door that forwards the
    #: caller's own credential upstream (``proxy``). Never printed: not in ``repr``.
    token: str = field(default="", repr=False, compare=False)
