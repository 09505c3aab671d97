"""The legacy wire keys (docs/specs/e2a.md §12.4): a response record that also carries, in its
``metadata``, the whole legacy JSON it replaces — an ``AgentResponse`` (the answer) or an
``AgentChunk`` (a streamed piece) — for an AgentServer → Gateway WebSocket peer that still
reads the old shapes during a migration.

The payload is kept as it came (a JSON object) and passed through untouched: records are
read, checked and projected to ACP and A2A from their ``body`` alone, never from these
keys, and the wire log masks secrets in them as anywhere else in a record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from trpc_bridge.codecs.e2a.errors import E2AFormatError
from trpc_bridge.codecs.e2a.models import E2AResponse

#: ``metadata`` key of a whole legacy ``AgentResponse``.
LEGACY_AGENT_RESPONSE_KEY: Final = "_e2a_wire_legacy_agent_response"
#: ``metadata`` key of a whole legacy ``AgentChunk``.
LEGACY_AGENT_CHUNK_KEY: Final = "_e2a_wire_legacy_agent_chunk"


def with_legacy_wire(
    response: E2AResponse, legacy: Mapping[str, Any], *, chunk: bool
) -> E2AResponse:
    """``response`` carrying ``legacy`` (a legacy ``AgentChunk`` when ``chunk``, else an
    ``AgentResponse``) under its legacy wire key."""
    if not isinstance(legacy, Mapping):
        raise E2AFormatError("a legacy wire payload must be a JSON object")
    key = LEGACY_AGENT_CHUNK_KEY if chunk else LEGACY_AGENT_RESPONSE_KEY
    return response.model_copy(update={"metadata": {**response.metadata, key: dict(legacy)}})


def legacy_wire(response: E2AResponse) -> tuple[str, dict[str, Any]] | None:
    """The legacy payload ``response`` carries: ``("agent_chunk" | "agent_response",
    payload)``, or ``None`` (a chunk's key first, should a record carry both)."""
    for key, kind in (
        (LEGACY_AGENT_CHUNK_KEY, "agent_chunk"),
        (LEGACY_AGENT_RESPONSE_KEY, "agent_response"),
    ):
        payload = response.metadata.get(key)
        if isinstance(payload, Mapping):
            return kind, dict(payload)
    return None
