"""Per-subscriber delivery buffer: unbounded, ordered, lossless, coalescing.

a2a-sdk's request path gives each stream a 1,024-event queue and silently drops a
consumer that falls behind. Here a slow consumer never loses anything: its buffer
grows, and once it holds more than ``coalesce_after`` frames, each new piece of a text
run that continues the buffer's last frame (same artifact, ``append``, same metadata,
one text part with the same part metadata) is merged into it instead of queued
(:class:`~trpc_bridge.codecs.a2a.text_delta.TextPiece`: a text delta is one, a protobuf
update with one text part is read as one). The merged frame carries the concatenated
text, so what the consumer reads is the same text, in order, in fewer frames. A
consumer that keeps up sees every frame as produced.

A :class:`Subscriber` yields stream frames (protobuf); a :class:`TextSubscriber`, for a
door that asked for text deltas, yields those as they came.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any, Generic, TypeVar

from a2a.types import TaskArtifactUpdateEvent

from trpc_bridge.codecs.a2a.text_delta import TextDelta, TextPiece
from trpc_bridge.codecs.encoding import RunFrame, StreamFrame
from trpc_bridge.server.options import EncodingOptions

F = TypeVar("F", bound=RunFrame)


class _UpdatePiece:
    """A protobuf artifact update with one text part, as a :class:`TextPiece`."""

    __slots__ = ("update",)

    def __init__(self, update: TaskArtifactUpdateEvent) -> None:
        self.update = update

    @property
    def text(self) -> str:
        text: str = self.update.artifact.parts[0].text
        return text

    def continued_by(self, other: _UpdatePiece) -> bool:
        mine, theirs = self.update, other.update
        return (
            theirs.append
            and theirs.artifact.artifact_id == mine.artifact.artifact_id
            and theirs.metadata == mine.metadata
            and theirs.artifact.parts[0].metadata == mine.artifact.parts[0].metadata
        )

    def with_text(self, text: str) -> _UpdatePiece:
        merged = TaskArtifactUpdateEvent()
        merged.CopyFrom(self.update)  # the original is shared with other subscribers
        merged.artifact.parts[0].text = text
        return _UpdatePiece(merged)


def _piece(frame: StreamFrame) -> _UpdatePiece | None:
    if (
        isinstance(frame, TaskArtifactUpdateEvent)
        and not frame.last_chunk
        and len(frame.artifact.parts) == 1
        and frame.artifact.parts[0].WhichOneof("content") == "text"
    ):
        return _UpdatePiece(frame)
    return None


class _Pending:
    """A buffered frame; a text piece also keeps the texts merged into it."""

    __slots__ = ("frame", "piece", "texts")

    def __init__(self, frame: Any, piece: TextPiece | None) -> None:
        self.frame = frame
        self.piece = piece
        self.texts: list[str] | None = None if piece is None else [piece.text]

    def materialise(self) -> Any:
        texts = self.texts
        if texts is None or len(texts) == 1:
            return self.frame
        merged = self.piece.with_text("".join(texts))  # type: ignore[union-attr]
        return merged.update if isinstance(merged, _UpdatePiece) else merged


class SubscriberBase(Generic[F]):
    """What both subscribers share: the buffer, coalescing and the reads."""

    def __init__(self, coalesce_after: int = EncodingOptions.coalesce_after) -> None:
        self._items: deque[_Pending] = deque()
        self._ready = asyncio.Event()
        self._closed = False
        self._coalesce_after = coalesce_after
        #: Frames merged into earlier ones (observability and tests).
        self.coalesced = 0

    def push(self, frame: StreamFrame) -> None:
        if not self._closed:
            self._add(frame, _piece(frame))

    def push_text(self, delta: TextDelta) -> None:
        raise NotImplementedError

    def _add(self, frame: Any, piece: TextPiece | None) -> None:
        items = self._items
        if piece is not None and len(items) > self._coalesce_after:
            last = items[-1]
            if (
                last.texts is not None
                and type(last.piece) is type(piece)
                and last.piece.continued_by(piece)
            ):
                last.texts.append(piece.text)
                self.coalesced += 1
                return
        items.append(_Pending(frame, piece))
        self._ready.set()

    def close(self) -> None:
        """No more frames will come; the consumer drains what is buffered."""
        self._closed = True
        self._ready.set()

    def __len__(self) -> int:
        return len(self._items)

    async def _wait(self) -> bool:
        """Until something is buffered (``True``) or it is closed and drained."""
        while not self._items:
            if self._closed:
                return False
            self._ready.clear()
            await self._ready.wait()
        return True

    async def next(self) -> F | None:
        """The next frame, or ``None`` once closed and drained."""
        if not await self._wait():
            return None
        frame: F = self._items.popleft().materialise()
        return frame

    async def next_batch(self) -> list[F] | None:
        """Every frame buffered now (at least one), or ``None`` once closed and drained:
        a writer that sends them at once pays its per-write costs once per batch."""
        if not await self._wait():
            return None
        items = self._items
        self._items = deque()
        return [item.materialise() for item in items]


class Subscriber(SubscriberBase[StreamFrame]):
    """One consumer of a live task's frames, as stream frames (protobuf)."""

    def push_text(self, delta: TextDelta) -> None:
        self.push(delta.to_proto())


class TextSubscriber(SubscriberBase[RunFrame]):
    """One consumer that takes text deltas as they came (a door that asked for them)."""

    def push_text(self, delta: TextDelta) -> None:
        if not self._closed:
            self._add(delta, delta)
