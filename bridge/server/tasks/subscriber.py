"""Per-subscriber delivery buffer: unbounded, ordered, lossless, coalescing.

a2a-sdk's request path gives each stream a 1,024-event queue and silently drops a
consumer that falls behind. Here a slow consumer never loses anything: its buffer
grows, and once it holds more than ``coalesce_after`` frames, each new text delta that
continues the buffer's last frame (same artifact, ``append``, same metadata, one text
part with the same part metadata) is merged into it instead of queued. The merged frame
carries the concatenated text, so what the consumer reads is the same text, in order,
in fewer frames. A consumer that keeps up sees every frame as produced.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

from a2a.types import TaskArtifactUpdateEvent

from trpc_bridge.codecs.a2a.text_delta import TextDelta
from trpc_bridge.codecs.encoding import StreamFrame
from trpc_bridge.server.options import EncodingOptions


def _single_text(frame: StreamFrame) -> bool:
    return isinstance(frame, TextDelta) or (
        isinstance(frame, TaskArtifactUpdateEvent)
        and not frame.last_chunk
        and len(frame.artifact.parts) == 1
        and frame.artifact.parts[0].WhichOneof("content") == "text"
    )


def _text(frame: TextDelta | TaskArtifactUpdateEvent) -> str:
    return frame.text if isinstance(frame, TextDelta) else frame.artifact.parts[0].text


@dataclass
class _Pending:
    frame: StreamFrame
    #: Text pieces of a coalescible delta; joined when the frame is delivered.
    texts: list[str] | None = field(default=None)

    def continues_with(self, frame: TextDelta | TaskArtifactUpdateEvent) -> bool:
        mine = self.frame
        if self.texts is None:
            return False
        if isinstance(mine, TextDelta) and isinstance(frame, TextDelta):
            return mine.continued_by(frame)
        return (
            isinstance(mine, TaskArtifactUpdateEvent)
            and isinstance(frame, TaskArtifactUpdateEvent)
            and frame.append
            and frame.artifact.artifact_id == mine.artifact.artifact_id
            and frame.metadata == mine.metadata
            and frame.artifact.parts[0].metadata == mine.artifact.parts[0].metadata
        )

    def materialise(self) -> StreamFrame:
        if self.texts is None or len(self.texts) == 1:
            return self.frame
        if isinstance(self.frame, TextDelta):
            return self.frame._replace(text="".join(self.texts))
        merged = TaskArtifactUpdateEvent()
        merged.CopyFrom(self.frame)  # the original is shared with other subscribers
        merged.artifact.parts[0].text = "".join(self.texts)
        return merged


class Subscriber:
    """One consumer of a live task's frames."""

    def __init__(self, coalesce_after: int = EncodingOptions.coalesce_after) -> None:
        self._items: deque[_Pending] = deque()
        self._ready = asyncio.Event()
        self._closed = False
        self._coalesce_after = coalesce_after
        #: Frames merged into earlier ones (observability and tests).
        self.coalesced = 0

    def push(self, frame: StreamFrame) -> None:
        if self._closed:
            return
        if _single_text(frame):
            assert isinstance(frame, TextDelta | TaskArtifactUpdateEvent)
            if len(self._items) > self._coalesce_after and self._items[-1].continues_with(frame):
                texts = self._items[-1].texts
                assert texts is not None
                texts.append(_text(frame))
                self.coalesced += 1
                return
            self._items.append(_Pending(frame, [_text(frame)]))
        else:
            self._items.append(_Pending(frame))
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

    async def next(self) -> StreamFrame | None:
        """The next frame, or ``None`` once closed and drained."""
        if not await self._wait():
            return None
        return self._items.popleft().materialise()

    async def next_batch(self) -> list[StreamFrame] | None:
        """Every frame buffered now (at least one), or ``None`` once closed and drained:
        a writer that sends them at once pays its per-write costs once per batch."""
        if not await self._wait():
            return None
        items = self._items
        self._items = deque()
        return [item.materialise() for item in items]
