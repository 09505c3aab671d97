"""Matrix cells that fail today, each with the reason; they run as ``xfail(strict=True)``,
so a fix that makes one pass fails the run until it is taken out of this table.
Measured with trpc-agent-py 1.2.0, google-adk 2.13.0, @a2a-js/sdk 1.3.0, a2a-java-sdk
0.3.2.Final and @google/adk 2.0.0 (docs/interop-matrix.md)."""

from __future__ import annotations

_ADK_UNARY_THOUGHT = (
    "ADK's client folds a unary task into one event and drops thought parts next to text "
    "(its own rule): the reasoning is not shown"
)

#: (column, scenario) → reason.
KNOWN: dict[tuple[str, str], str] = {
    ("adk→py unary v1", "reasoning"): _ADK_UNARY_THOUGHT,
    ("adk→proxy→trpc-py unary", "reasoning"): _ADK_UNARY_THOUGHT,
    ("adk→proxy→trpc-py-v1 unary", "reasoning"): _ADK_UNARY_THOUGHT,
    ("adk→proxy→go unary", "reasoning"): _ADK_UNARY_THOUGHT,
    ("adk→proxy→js unary", "reasoning"): _ADK_UNARY_THOUGHT,
    ("adk→proxy→java unary", "reasoning"): _ADK_UNARY_THOUGHT,
    ("adk→proxy→adk-js unary", "reasoning"): _ADK_UNARY_THOUGHT,
}


def known_failure(column: str, scenario: str) -> str | None:
    return KNOWN.get((column, scenario))


#: (server peer, scenario) → why that peer's own server cannot play the scenario: every
#: cell it serves (``py→peer``, ``X→proxy→peer``) is n/a, with the reason in the table.
CANNOT_SERVE: dict[tuple[str, str], str] = {
    ("java", "long"): (
        "the A2A Java SDK 0.3.2 server stalls a task at its 1,000th queued event "
        "(EventQueue.DEFAULT_QUEUE_SIZE; the executor blocks in enqueueEvent): the "
        "1,000-delta run never ends, for the SDK's own client as for the bridge"
    ),
}


def cannot_serve(server: str, scenario: str) -> str | None:
    return CANNOT_SERVE.get((server, scenario))
