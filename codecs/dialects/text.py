"""One rule for the consolidated final text, whatever the sender's dialect, and the
response id each dialect writes.

Every streaming agent framework sends its answer twice — the pieces, then the whole —
but each marks the whole differently:

- trpc-agent-go (v0): a ``chat.completion`` artifact under the same artifact id;
- trpc-agent-python: a ``lastChunk`` artifact with a *new* artifact id and metadata
  ``{"partial": false}`` (its chunks carry ``"partial": "True"``, a string);
- Google ADK (legacy executor): a ``working`` status message with the full text, under
  the same ``adk_event_id`` as the pieces, then once more as the ``lastChunk`` artifact;
- plain A2A: an artifact update with ``append: false`` on an artifact id already seen,
  or the full text as an artifact after the same text came in status messages.

:class:`FinalText` keeps, per response, the text streamed so far and the last complete
text, and says what a new text unit is (:class:`Seen`): a piece, the completion of the
pieces (same text), a replacement (different text, replace: A2A ``append: false``), or a
repeat of a completed response (drop it). The rule: *a text that equals what a response
already showed — as pieces or complete — is that response's, never a new one.*

:func:`response_id` reads the ids: ``llm_response_id`` (trpc), ADK's
``adk_custom_metadata.llm_response_id`` (a JSON string or an object), else
``adk_event_id`` (stable across one model call's events), remembered so that a later
frame carrying only ``adk_event_id`` maps to the same response.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from trpc_bridge.codecs.trpc.keys import META_RESPONSE_ID

META_PARTIAL = "partial"
ADK_CUSTOM_METADATA = "adk_custom_metadata"
ADK_EVENT_ID = "adk_event_id"


def partial_flag(metadata: Mapping[str, Any]) -> bool | None:
    """trpc-agent-python's ``partial`` key: a JSON bool or the strings ``"True"`` /
    ``"False"`` (its 0.3 and 1.x adapters write both); ``None`` when absent."""
    value = metadata.get(META_PARTIAL)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


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
        custom = _adk_custom(metadata).get(META_RESPONSE_ID)
        event_id = metadata.get(ADK_EVENT_ID)
        event_id = event_id if isinstance(event_id, str) else ""
        if isinstance(custom, str) and custom:
            if event_id:
                self._aliases[event_id] = custom
            return custom
        return self._aliases.get(event_id, event_id)


class Seen(Enum):
    PIECE = "piece"  # more text of a response being streamed
    COMPLETE = "complete"  # the whole of what was streamed (or a first, whole text)
    REPLACE = "replace"  # a different whole text for the response (A2A append: false)
    REPEAT = "repeat"  # a response already complete, sent again: show nothing


@dataclass
class _Response:
    streamed: str = ""
    complete: str | None = None


@dataclass
class FinalText:
    """Classifies the text units of one stream (see the module docstring)."""

    _responses: dict[str, _Response] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list)

    def _get(self, key: str) -> _Response:
        if key not in self._responses:
            self._responses[key] = _Response()
            self._order.append(key)
        return self._responses[key]

    @property
    def last(self) -> str | None:
        """The response seen last (the one a run's error belongs to)."""
        return self._order[-1] if self._order else None

    def owner(self, text: str) -> str | None:
        """The most recent response that already showed exactly ``text``."""
        for key in reversed(self._order):
            response = self._responses[key]
            if text and text in (response.streamed, response.complete):
                return key
        return None

    def piece(self, key: str, text: str, *, unmarked: bool = False) -> Seen:
        """A text sent as a piece. ``unmarked``: the sender does not mark its whole text
        (ADK's status messages), so a piece equal to everything its response streamed
        so far is taken as that whole (two equal pieces in a row are misread so)."""
        response = self._get(key)
        if response.complete is not None and text == response.complete:
            return Seen.REPEAT
        if unmarked and response.streamed and text == response.streamed:
            response.complete = text
            return Seen.COMPLETE
        response.streamed += text
        return Seen.PIECE

    def whole(self, key: str, text: str, *, replaces: bool = False) -> Seen:
        """A text sent as complete: the consolidated text of ``key`` (``replaces``: the
        sender said so, e.g. A2A ``append: false`` on a seen artifact)."""
        response = self._get(key)
        if response.complete is not None and text == response.complete:
            return Seen.REPEAT
        known = bool(response.streamed or response.complete is not None)
        same = text in (response.streamed, response.complete)
        response.complete = text
        if known and not same and replaces:
            return Seen.REPLACE
        return Seen.COMPLETE


__all__ = ["FinalText", "ResponseIds", "Seen", "partial_flag"]
