"""A2A results → the merged progress stream (the consumer side of tfrs progress).

The same reader serves every way progress reaches a caller (decision E5/E6): the
``working`` status updates of a ``message/stream`` / ``SendStreamingMessage`` stream, of
a ``tasks/resubscribe`` / ``SubscribeToTask`` stream, and the ``history`` of a task from
``tasks/get`` (a coarse replay: whatever the server kept). Results are JSON in either
A2A shape (0.3 ``kind``-tagged, 1.0 wrapped), as
:func:`~trpc_bridge.codecs.a2a.frames.read_result` reads them, or frames already read.

Only a ``working`` status message counts as progress on a stream; in a task's history
only agent messages with a ``tfrs`` key count, since a history also holds ordinary
answer messages. Turns are told apart by task id (decision: not in the envelope).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from trpc_bridge.codecs.a2a.frames import (
    Frame,
    StatusFrame,
    TaskFrame,
    WireMessage,
    read_result,
)
from trpc_bridge.codecs.errors import CodecError
from trpc_bridge.codecs.tfrs.envelope import METADATA_KEY, read_envelope
from trpc_bridge.codecs.tfrs.merge import ProgressItem, ProgressMerger

log = logging.getLogger(__name__)

WORKING = "working"


def _has_carrier(message: WireMessage) -> bool:
    return any(METADATA_KEY in p.metadata for p in message.parts)


def message_item(
    message: WireMessage, *, task_id: str = "", require_envelope: bool = False
) -> ProgressItem | None:
    """The progress item of one message: its first Part with a ``tfrs`` key (one
    envelope per update; later ones are ignored), else its text as a pseudo-envelope.
    ``None`` for a message with neither (or, with ``require_envelope``, without a key)."""
    carriers = [p for p in message.parts if METADATA_KEY in p.metadata]
    if carriers:
        if len(carriers) > 1:
            log.debug(
                "message %s has %d tfrs parts; reading the first", message.message_id, len(carriers)
            )
        part = carriers[0]
        envelope, problem = read_envelope(part.text, part.metadata)
        return ProgressItem(envelope, part.text, task_id, message.message_id, problem)
    if require_envelope:
        return None
    text = "".join(p.text for p in message.parts if p.kind == "text")
    if not text:
        return None
    envelope, problem = read_envelope(text, {})
    return ProgressItem(envelope, text, task_id, message.message_id, problem)


#: The results that can carry progress: a status update's message, a task's history and
#: status message. Artifacts and messages never do (:func:`frame_items` and
#: :func:`content_only` give nothing for them and leave them as they are).
PROGRESS_FRAMES = (StatusFrame, TaskFrame)


def frame_items(frame: Frame) -> list[ProgressItem]:
    """The progress items one result carries, in order (duplicates included)."""
    if isinstance(frame, StatusFrame):
        if frame.state != WORKING or frame.message is None:
            return []
        item = message_item(frame.message, task_id=frame.task_id)
        return [item] if item is not None else []
    if isinstance(frame, TaskFrame):
        items = [
            message_item(m, task_id=frame.task_id, require_envelope=True)
            for m in frame.history
            if m.role != "user"
        ]
        if frame.state == WORKING and frame.status_message is not None:
            items.append(message_item(frame.status_message, task_id=frame.task_id))
        return [i for i in items if i is not None]
    return []


def content_only(frame: Frame, *, all_working: bool = False) -> Frame:
    """``frame`` as a content decoder should see it, progress taken out: a working update
    that carries an envelope loses its message (the decoder still learns the task and its
    state, and shows nothing), and a task loses the envelope-carrying messages of its
    history and of a working status. ``all_working``: every working update's message is
    progress, with or without an envelope (a peer that speaks tfrs holds that working
    text is never the reply: ``docs/specs/tfrs-progress.md`` §7). Anything else comes back as is."""
    if isinstance(frame, StatusFrame):
        message = frame.message
        if frame.state != WORKING or message is None:
            return frame
        if not (all_working or _has_carrier(message)):
            return frame
        return StatusFrame(frame.task_id, frame.context_id, WORKING, None, {})
    if not isinstance(frame, TaskFrame):
        return frame
    history = tuple(m for m in frame.history if not _has_carrier(m))
    status = frame.status_message
    if frame.state == WORKING and status is not None and _has_carrier(status):
        status = None
    return replace(frame, history=history, status_message=status)


class ProgressConsumer:
    """Feeds any number of result streams (and task snapshots) into one merged progress
    per task: :meth:`feed` answers only what is new, so a resubscribe stream or a
    ``tasks/get`` after a dropped stream repeats nothing already shown."""

    def __init__(self) -> None:
        self._mergers: dict[str, ProgressMerger] = {}

    def merger(self, task_id: str) -> ProgressMerger:
        return self._mergers.setdefault(task_id, ProgressMerger())

    @property
    def task_ids(self) -> list[str]:
        return list(self._mergers)

    def feed(self, result: Any) -> list[ProgressItem]:
        """New progress items in one result (JSON or a frame); anything unreadable is no
        progress."""
        try:
            frame = read_result(result)
        except CodecError as exc:
            log.debug("no progress in an unreadable result: %s", exc)
            return []
        return self.feed_frame(frame)

    def feed_frame(self, frame: Frame) -> list[ProgressItem]:
        return self.feed_items(frame_items(frame))

    def feed_items(self, items: Iterable[ProgressItem]) -> list[ProgressItem]:
        return [item for item in items if self.merger(item.task_id).add(item)]
