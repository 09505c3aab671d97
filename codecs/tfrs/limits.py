"""Size rules for a block's free text (docs/specs/tfrs-progress.md, E4).

A piece is measured in UTF-8 bytes. Text over the soft limit (8 KB) is cut at line ends
into pieces of at most 8 KB, so a ``seq`` per piece keeps them in order; one line longer
than the soft limit travels alone as long as it fits the hard limit (64 KB), and a line
over the hard limit is dropped (the producer says so in the text fallback).
"""

from __future__ import annotations

from dataclasses import dataclass

SOFT_LIMIT = 8 * 1024
HARD_LIMIT = 64 * 1024


@dataclass(frozen=True)
class Dropped:
    """A piece that was over the hard limit: only its size is kept."""

    size: int


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


def split_text(text: str, *, soft: int = SOFT_LIMIT, hard: int = HARD_LIMIT) -> list[str | Dropped]:
    """``text`` in pieces, in order. Joining the ``str`` pieces gives ``text`` back
    whenever nothing was dropped; every ``str`` piece is at most ``soft`` bytes, or one
    whole line of at most ``hard`` bytes."""
    if utf8_size(text) <= soft:
        return [text]
    pieces: list[str | Dropped] = []
    current: list[str] = []
    current_size = 0
    for line in text.splitlines(keepends=True):
        size = utf8_size(line)
        if current and current_size + size > soft:
            pieces.append("".join(current))
            current, current_size = [], 0
        if size > soft:
            pieces.append(line if size <= hard else Dropped(size))
            continue
        current.append(line)
        current_size += size
    if current:
        pieces.append("".join(current))
    return pieces
