"""Names every transport of the bridge shares, defined once: the identity header, the
agent card paths, the A2A version header, how the bridge mints the ids it needs, and how
it quotes an id a client sent.

The identity header is trpc-agent-go's default (``WithUserIDHeader``); gRPC carries the
same name, lower-cased, as metadata. Both card paths are served, and read in this order,
as trpc-agent-go's v0 client reads them (``docs/wire-spec.md`` §1, §6).
"""

from __future__ import annotations

import os

#: The caller's identity (HTTP header; ``x-user-id`` metadata on gRPC).
USER_ID_HEADER = "X-User-ID"
#: The A2A protocol version a 1.0 caller declares on HTTP (a2a-sdk: missing = 0.3).
A2A_VERSION_HEADER = "A2A-Version"
#: Well-known agent card paths: A2A's current one first, then the legacy one.
CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


#: Hex digit → the UUID variant digit (``10xx``) with the same two low bits.
_VARIANT = dict(zip("0123456789abcdef", "89ab89ab89ab89ab", strict=True))


def new_id(prefix: str) -> str:
    """``<prefix>-<uuid4>``: message (``msg``), context (``ctx``), task (``task``) and
    fallback artifact (``artifact``) ids, shaped like trpc-agent-go's.

    The UUID is what ``str(uuid.uuid4())`` gives (122 random bits, version 4, RFC 4122
    variant), written from the random bytes' hex: a third of the cost; a unary answer
    mints one per message it carries."""
    h = os.urandom(16).hex()
    return f"{prefix}-{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


#: Characters of a client's id quoted back in an error (ids the bridge mints are shorter).
ID_SHOWN = 80


def shown_id(value: str) -> str:
    """A client's id as an error message quotes it: whole when short, else its start and
    how long it was (a 1 MB id must not come back whole: gRPC carries the message in a
    header, which it would overflow)."""
    if len(value) <= ID_SHOWN:
        return value
    return f"{value[:ID_SHOWN]}… ({len(value)} characters)"
