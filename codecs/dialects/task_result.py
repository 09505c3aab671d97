"""A unary result (a Task) with each text once: the rules of
:mod:`~trpc_bridge.codecs.dialects.frames` for streams, applied to the agent messages of
the task's history, then its artifacts, then its status message
(``docs/specs/trpc-interaction.md`` §11.5, §11.6)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from trpc_bridge.codecs.a2a.frames import (
    FAILURE_STATES,
    TERMINAL_STATES,
    Frame,
    TaskFrame,
    WireArtifact,
    WireMessage,
)
from trpc_bridge.codecs.dialects.frames import error_message_as_failure
from trpc_bridge.codecs.dialects.text import ResponseIds, Shown, ShownText, part_texts


@dataclass
class _History:
    """The agent messages of a unary Task's history, each text once (§11.5, §11.6)."""

    shown: ShownText = field(default_factory=ShownText)
    ids: ResponseIds = field(default_factory=ResponseIds)
    kept: list[WireMessage | None] = field(default_factory=list)
    #: id → index in ``kept`` of the message shown under it.
    at: dict[str, int] = field(default_factory=dict)
    #: Each unit of a text message → its index in ``kept``.
    _text_at: dict[int, int] = field(default_factory=dict)

    def add(self, message: WireMessage) -> None:
        text, thought, text_only = part_texts(message.parts)
        if message.role == "user" or not text_only or not (text or thought):
            if message.role != "user" and message.parts:
                self.shown.add("")
            self.kept.append(message)
            return
        key = self.ids.read(message.metadata) or message.message_id
        known = self.shown.unit(key)
        if known is not None:  # more of a message already kept
            if not known.same(text, thought):
                known.extend(text, thought)
                earlier = self.kept[self.at[key]]
                assert earlier is not None
                self.kept[self.at[key]] = replace(earlier, parts=earlier.parts + message.parts)
            return
        copied = self.shown.copied(text, thought, loose=False)
        if copied:
            if len(copied) > 1 and all(id(u) in self._text_at for u in copied):
                self._merge(len(copied))
            return
        unit = self.shown.add(key, text, thought)
        self._text_at[id(unit)] = len(self.kept)
        if key:
            self.at[key] = len(self.kept)
        self.kept.append(message)

    def _merge(self, count: int) -> None:
        """The messages the next one repeats whole were its pieces (ADK keeps its pieces
        and then the whole, without the response id that tied them): one message, under
        the first piece's id."""
        places = [self._text_at.pop(id(u)) for u in self.shown.units[-count:]]
        pieces = [self.kept[i] for i in places]
        first = pieces[0]
        assert first is not None
        parts = tuple(p for piece in pieces if piece is not None for p in piece.parts)
        self.kept[places[0]] = replace(first, parts=parts)
        for place in places[1:]:
            self.kept[place] = None
        self._text_at[id(self.shown.merge(count))] = places[0]

    def messages(self) -> list[WireMessage]:
        return [m for m in self.kept if m is not None]


def _remnant(before: list[WireArtifact], shown: list[Shown], text: str) -> bool:
    """The artifact just kept holds only the end of ``text`` (§11.6, remnants)."""
    if not before or not before[0].artifact_id or not shown or shown[0].reasoning:
        return False
    kept, has_text_only = shown[0].text, part_texts(before[0].parts)[2]
    return has_text_only and bool(kept) and kept != text and text.endswith(kept)


def normalise_task(frame: Frame) -> Frame:
    """A unary result with each text once (see the module docstring)."""
    if not isinstance(frame, TaskFrame):
        return error_message_as_failure(frame)
    history = _History()
    for message in frame.history:
        history.add(message)
    kept = history.messages()
    status = frame.status_message
    failure = part_texts(status.parts)[:2] if status and frame.state in FAILURE_STATES else None
    if failure is not None and any(failure):
        # ADK keeps its error message in the history too: the failed status says it.
        kept = [m for m in kept if m.role == "user" or part_texts(m.parts)[:2] != failure]
    shown = history.shown
    artifacts: list[WireArtifact] = []
    for artifact in frame.artifacts:
        text, thought, text_only = part_texts(artifact.parts)
        if text_only and shown.copied(text, thought, loose=True):
            continue
        if text_only and artifact.artifact_id and _remnant(artifacts[-1:], shown.units[-1:], text):
            # What a store that replaced each chunk kept of the artifact this one
            # completes (a2a-sdk 0.3 with chunks sent without `append`): one answer,
            # under the remnant's id.
            shown.units[-1].replace(text, thought)
            artifacts[-1] = replace(artifact, artifact_id=artifacts[-1].artifact_id)
            continue
        shown.add(artifact.artifact_id, text, thought)
        artifacts.append(artifact)
    if status is not None and frame.state in TERMINAL_STATES - FAILURE_STATES:
        text, thought, text_only = part_texts(status.parts)
        if text_only and shown.copied(text, thought, loose=True):
            status = None
    return replace(frame, history=tuple(kept), artifacts=tuple(artifacts), status_message=status)


__all__ = ["normalise_task"]
