"""Matrix cells that fail today, each with the reason; they run as ``xfail(strict=True)``,
so a fix that makes one pass fails the run until it is taken out of this table.
Measured with trpc-agent-py 1.2.0 and google-adk 2.13.0 (docs/interop.md)."""

from __future__ import annotations

KNOWN: dict[tuple[str, str], str] = {}


def known_failure(column: str, scenario: str) -> str | None:
    return KNOWN.get((column, scenario))
