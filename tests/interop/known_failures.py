"""Matrix cells that fail today, each with the reason; they run as ``xfail(strict=True)``,
so a fix that makes one pass fails the run until it is taken out of this table.
Measured with trpc-agent-py 1.2.0 and google-adk 2.13.0 (docs/interop.md)."""

from __future__ import annotations

_ADK_UNARY_THOUGHT = (
    "ADK's client folds a unary task into one event and drops thought parts next to text "
    "(its own rule): the reasoning is not shown"
)

_TRPC_PY_03_CARD = (
    "trpc-agent-py's a2a-sdk 0.3 client reads the card at agent-card.json without an "
    "A2A-Version header and needs the 0.3 `url` field, which the 1.0 card served there "
    "since [9] leaves out (the TCK checks that card against the 1.0 schema); the same "
    "client works against agent.json or with A2A-Version: 0.3, and its a2a-v1 twin passes"
)
_SCENARIOS = ("text", "reasoning", "tool", "parallel_tools", "error", "unicode", "long")
_TRPC_PY_03_COLUMNS = (
    "trpc-py→py stream v0",
    "trpc-py→proxy→adk stream",
    "trpc-py→proxy→go stream",
)

#: (column, scenario) → reason.
KNOWN: dict[tuple[str, str], str] = {
    **{(c, s): _TRPC_PY_03_CARD for c in _TRPC_PY_03_COLUMNS for s in _SCENARIOS},
    ("adk→py unary v1", "reasoning"): _ADK_UNARY_THOUGHT,
    ("adk→proxy→trpc-py unary", "reasoning"): _ADK_UNARY_THOUGHT,
    ("adk→proxy→trpc-py-v1 unary", "reasoning"): _ADK_UNARY_THOUGHT,
    ("adk→proxy→go unary", "reasoning"): _ADK_UNARY_THOUGHT,
}


def known_failure(column: str, scenario: str) -> str | None:
    return KNOWN.get((column, scenario))
