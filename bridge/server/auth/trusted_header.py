"""``X-User-ID`` taken on trust: trpc-agent-go's convention
(``docs/specs/trpc-interaction.md`` §3.3).

Right only where nobody but a trusted party can reach the port: a loopback bind (the
default there) or behind an authenticating proxy that sets the header itself
(``--trust-user-header``). The value is trimmed; without one the caller is
:data:`~trpc_bridge.names.ANONYMOUS`, one shared identity. A value longer than
the task store's owner column, or a second copy of the header, is a client error.
"""

from __future__ import annotations

from trpc_bridge.names import ANONYMOUS, ID_LENGTH, USER_ID_HEADER, USER_ID_KEY
from trpc_bridge.server.auth.errors import CredentialMisuse, Unauthenticated
from trpc_bridge.server.auth.presented import Presented
from trpc_bridge.server.auth.principal import Principal, Scheme


def header_principal(value: str | None) -> Principal:
    """The principal an ``X-User-ID`` value (None: absent) names."""
    user_id = (value or "").strip()
    if len(user_id) > ID_LENGTH:
        raise CredentialMisuse(f"{USER_ID_HEADER} is longer than {ID_LENGTH} characters")
    return Principal(user_id or ANONYMOUS, Scheme.HEADER)


class TrustedHeader:
    scheme = Scheme.HEADER

    async def authenticate(self, presented: Presented) -> Principal:
        return header_principal(presented.one(USER_ID_KEY))

    def challenge(self, refusal: Unauthenticated) -> str:  # never refuses: no challenge
        return ""

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass
