"""Names every transport of the bridge shares, defined once: the identity header, the
agent card paths, the A2A version header, the transport names, how the bridge mints
the ids it needs, and how it quotes an id a client sent.

The identity header is trpc-agent-go's default (``WithUserIDHeader``); gRPC carries the
same name, lower-cased, as metadata. Both card paths are served, and read in this order,
as trpc-agent-go's v0 client reads them (``docs/specs/trpc-interaction.md`` §1, §6).
"""

from __future__ import annotations

import os
from typing import Final

#: The caller's identity (HTTP header; ``x-user-id`` metadata on gRPC).
USER_ID_HEADER: Final = "X-User-ID"
#: The same header as gRPC metadata and as the key of lower-cased header maps.
USER_ID_KEY: Final = "x-user-id"
#: The identity of a caller that sent none: one shared owner for its tasks.
ANONYMOUS: Final = "anonymous"
#: Longest task / context id and user id (a2a-sdk's owner column) the task store can
#: keep; every door refuses longer ones up front.
ID_LENGTH: Final = 255
#: The A2A protocol version a 1.0 caller declares on HTTP (a2a-sdk: missing = 0.3).
A2A_VERSION_HEADER: Final = "A2A-Version"
#: Well-known agent card paths: A2A's current one first, then the legacy one.
CARD_PATHS: Final = ("/.well-known/agent-card.json", "/.well-known/agent.json")

#: The A2A protocol bindings, spelled as cards (``protocolBinding``) and spans spell them.
TRANSPORT_JSONRPC: Final = "JSONRPC"
TRANSPORT_REST: Final = "HTTP+JSON"
TRANSPORT_GRPC: Final = "GRPC"
#: The bridge's other doors, as their calls and spans name them.
TRANSPORT_AGUI: Final = "AG-UI"
TRANSPORT_AGENT_HOST: Final = "AgentHost"
TRANSPORT_ACP: Final = "ACP"


#: Hex digit → the UUID variant digit (``10xx``) with the same two low bits.
_VARIANT = dict(zip("0123456789abcdef", "89ab89ab89ab89ab", strict=True))


def new_uuid() -> str:
    """A canonical random UUID string, what ``str(uuid.uuid4())`` gives (122 random bits,
    version 4, RFC 4122 variant), written from the random bytes' hex: a third of the
    cost; a unary answer mints one per message it carries."""
    return _uuid_of(os.urandom(16).hex())


def _uuid_of(h: str) -> str:
    """The canonical UUID (version 4, RFC 4122 variant) written from 32 random hex digits."""
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


def new_ids(prefix: str, count: int) -> list[str]:
    """``count`` ids as :func:`new_id` mints them, from one draw of random bytes (a unary
    answer takes one per message it carries)."""
    h = os.urandom(16 * count).hex()
    return [f"{prefix}-{_uuid_of(h[i : i + 32])}" for i in range(0, 32 * count, 32)]


def new_id(prefix: str) -> str:
    """``<prefix>-<uuid4>``: message (``msg``), context (``ctx``), task (``task``) and
    fallback artifact (``artifact``) ids, shaped like trpc-agent-go's."""
    return f"{prefix}-{new_uuid()}"


#: Hex ids drawn ahead: one ``getrandom`` call per batch rather than one per id (a
#: decoded stream mints an event id per frame). A forked child draws its own.
_HEX_IDS_PER_DRAW = 64
_hex_ids: list[str] = []
os.register_at_fork(after_in_child=_hex_ids.clear)


def new_hex_id() -> str:
    """128 random bits as 32 hex digits: event ids, E2A request ids, replica
    incarnations (a tenth of the cost of ``uuid4()``; the event id is on the hot path)."""
    while True:
        try:
            return _hex_ids.pop()  # atomic: threads never take the same id
        except IndexError:
            digits = os.urandom(16 * _HEX_IDS_PER_DRAW).hex()
            _hex_ids.extend([digits[i : i + 32] for i in range(0, len(digits), 32)])


def new_response_id() -> str:
    """A response id shaped like trpc's / OpenAI's (``chatcmpl-`` and 24 hex digits)."""
    return f"chatcmpl-{os.urandom(12).hex()}"


#: Characters of a client's id quoted back in an error (ids the bridge mints are shorter).
ID_SHOWN = 80


def shown_id(value: str) -> str:
    """A client's id as an error message quotes it: whole when short, else its start and
    how long it was (a 1 MB id must not come back whole: gRPC carries the message in a
    header, which it would overflow)."""
    if len(value) <= ID_SHOWN:
        return value
    return f"{value[:ID_SHOWN]}… ({len(value)} characters)"
