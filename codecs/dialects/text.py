"""What a stream has shown so far, and when a new text only repeats it
(``docs/specs/trpc-interaction.md`` §11.5–§11.6); the response ids each dialect writes.

Every streaming agent framework sends its answer twice — the pieces, then the whole — and
each marks the whole its own way, or not at all:

- trpc-agent-go (v0): a ``chat.completion`` artifact under the same artifact id;
- trpc-agent-python: a ``lastChunk`` artifact with a *new* artifact id and the full text;
- Google ADK (legacy executor): a ``working`` status message with the full text, under
  the same ``adk_event_id`` as the pieces, then once more as the ``lastChunk`` artifact;
- Strands, Microsoft Agent Framework: each piece a ``working`` status message with an id
  of its own, then the full text as an artifact (Strands: with a trailing newline);
- pydantic-ai: the agent's messages in a unary Task's history, then the output as an
  artifact.

:class:`ShownText` keeps each shown unit (a message, an artifact) in the order it first
appeared, and answers the one rule: *a text that repeats the last units shown, up to
whitespace and Unicode normalisation where the sender may have reformatted it, is a copy
of them, not an answer of its own.*

:func:`ResponseIds.read` reads the ids: ``llm_response_id`` (trpc), ADK's
``adk_custom_metadata.llm_response_id`` (a JSON string or an object), else
``adk_event_id`` (stable across one model call's events), remembered so that a later
frame carrying only ``adk_event_id`` maps to the same response.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trpc_bridge.codecs.a2a.frames import WirePart
from trpc_bridge.codecs.a2a.reasoning import is_reasoning
from trpc_bridge.codecs.trpc.keys import META_RESPONSE_ID

ADK_CUSTOM_METADATA = "adk_custom_metadata"
ADK_EVENT_ID = "adk_event_id"


def _adk_custom(metadata: Mapping[str, Any]) -> Mapping[str, Any]:
    value = metadata.get(ADK_CUSTOM_METADATA)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, Mapping) else {}


@dataclass
class ResponseIds:
    """Response ids of one stream: ADK event ids seen with an ``llm_response_id`` map to
    it for the rest of the stream."""

    _aliases: dict[str, str] = field(default_factory=dict)

    def read(self, metadata: Mapping[str, Any]) -> str:
        explicit = metadata.get(META_RESPONSE_ID)
        if isinstance(explicit, str) and explicit:
            return explicit
        if ADK_CUSTOM_METADATA not in metadata and ADK_EVENT_ID not in metadata:
            return ""  # not ADK's (most frames)
        custom = _adk_custom(metadata).get(META_RESPONSE_ID)
        event_id = metadata.get(ADK_EVENT_ID)
        event_id = event_id if isinstance(event_id, str) else ""
        if isinstance(custom, str) and custom:
            if event_id:
                self._aliases[event_id] = custom
            return custom
        return self._aliases.get(event_id, event_id)


def normalise(text: str) -> str:
    """Text as copies are compared: NFC, each run of whitespace one space, trimmed."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def weight(text: str) -> int:
    """The code points of ``text`` that are not whitespace, decomposed (NFD): equal for
    texts equal up to normalisation, and additive over a concatenation — so a run of
    units heavier than a text cannot be what it repeats."""
    # ``split()`` drops exactly the characters ``isspace()`` is true of.
    return len("".join(unicodedata.normalize("NFD", text).split())) if text else 0


@dataclass(slots=True)
class Shown:
    """One unit shown so far: its id (``""``: none) and its text and reasoning."""

    key: str
    text: str = ""
    reasoning: str = ""
    weight: int = 0

    def same(self, text: str, reasoning: str) -> bool:
        return (text, reasoning) == (self.text, self.reasoning)

    def extend(self, text: str, reasoning: str = "") -> None:
        self.text += text
        self.reasoning += reasoning
        self.weight += weight(text)

    def replace(self, text: str, reasoning: str = "") -> None:
        self.text, self.reasoning, self.weight = text, reasoning, weight(text)


@dataclass
class ShownText:
    """The units one stream (or one unary result) has shown, in order of first
    appearance."""

    units: list[Shown] = field(default_factory=list)
    _by_key: dict[str, Shown] = field(default_factory=dict)

    def unit(self, key: str) -> Shown | None:
        """The unit shown under ``key`` (never one without an id)."""
        return self._by_key.get(key) if key else None

    def add(self, key: str, text: str = "", reasoning: str = "") -> Shown:
        unit = Shown(key, text, reasoning, weight(text))
        self.units.append(unit)
        if key:
            self._by_key[key] = unit
        return unit

    def merge(self, count: int) -> Shown:
        """The last ``count`` units as one, under the first one's id."""
        run = self.units[-count:]
        merged = Shown(
            run[0].key,
            "".join(u.text for u in run),
            "".join(u.reasoning for u in run),
            sum(u.weight for u in run),
        )
        del self.units[-count:]
        self.units.append(merged)
        for unit in run:
            if unit.key and self._by_key.get(unit.key) is unit:
                del self._by_key[unit.key]
        if merged.key:
            self._by_key[merged.key] = merged
        return merged

    @property
    def last(self) -> str | None:
        """The id of the unit shown last (the response a run's error belongs to)."""
        return self.units[-1].key if self.units else None

    def copied(self, text: str, reasoning: str, *, loose: bool) -> list[Shown] | None:
        """The last k ≥ 1 units that ``text`` (and ``reasoning``, when it has any)
        repeats, or ``None``: compared exactly, or (``loose``) up to whitespace and
        Unicode normalisation. A text of whitespace only repeats nothing."""
        target = weight(text)
        if not target:
            return None
        total = 0
        for k in range(1, len(self.units) + 1):
            total += self.units[-k].weight
            if total > target:
                return None
            if total < target:
                continue
            run = self.units[-k:]
            if _same(text, "".join(u.text for u in run), loose) and (
                not reasoning or _same(reasoning, "".join(u.reasoning for u in run), loose)
            ):
                return run
        return None


def _same(copy: str, original: str, loose: bool) -> bool:
    return normalise(copy) == normalise(original) if loose else copy == original


def part_texts(parts: tuple[WirePart, ...]) -> tuple[str, str, bool]:
    """(text, reasoning, only text parts?) of some parts."""
    if not parts:
        return "", "", True
    text: list[str] = []
    thought: list[str] = []
    text_only = True
    for part in parts:
        if part.kind == "text":
            (thought if is_reasoning(part.metadata) else text).append(part.text)
        else:
            text_only = False
    return "".join(text), "".join(thought), text_only


__all__ = ["ResponseIds", "Shown", "ShownText", "normalise", "part_texts", "weight"]
