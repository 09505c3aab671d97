"""Which text parts are reasoning: each framework marks them in the part's metadata in
its own way (``docs/specs/trpc-interaction.md`` §11.2). A part with any of these markers is
reasoning for every reader in the bridge; booleans must be JSON ``true`` (trpc reads the string
``"true"`` as no marker)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: (key, value) pairs that mark a text part as reasoning, by framework.
REASONING_MARKERS: tuple[tuple[str, Any], ...] = (
    ("thought", True),  # trpc-agent-go, trpc-agent-python
    ("adk_thought", True),  # Google ADK
    ("type", "thinking"),  # pydantic-ai (fasta2a)
    ("_agentscope_block_type", "thinking"),  # AgentScope
)


def is_reasoning(metadata: Mapping[str, Any]) -> bool:
    """The part metadata marks its text as reasoning."""
    if not metadata:  # most parts carry none
        return False
    for key, value in REASONING_MARKERS:
        found = metadata.get(key)
        if found is value if isinstance(value, bool) else found == value:
            return True
    return False


__all__ = ["REASONING_MARKERS", "is_reasoning"]
