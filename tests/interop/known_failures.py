"""Matrix cells that fail today, each with the reason (issue [8]); they run as
``xfail(strict=True)``, so a fix that makes one pass fails the run until it is removed
from this table."""

from __future__ import annotations

#: (column, scenario or "*") → reason.
KNOWN: dict[tuple[str, str], str] = {}


def known_failure(column: str, scenario: str) -> str | None:
    return KNOWN.get((column, scenario)) or KNOWN.get((column, "*"))
