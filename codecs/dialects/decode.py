"""The decoder for any dialect: trpc's decoder behind the rewrites of
:mod:`~trpc_bridge.codecs.dialects.frames` (trpc-agent-python, ADK, plain A2A). For trpc's
own frames it is trpc's decoder, unchanged."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from trpc_bridge.codecs.a2a.frames import read_result
from trpc_bridge.codecs.dialects.frames import DialectFrames
from trpc_bridge.codecs.dialects.task_result import normalise_task
from trpc_bridge.codecs.trpc.decode import DataPartMapper, StreamDecoder, decode_result
from trpc_bridge.events import AgentEvent


class DialectStreamDecoder(StreamDecoder):
    """A :class:`StreamDecoder` that reads every dialect's stream (one per stream)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._dialect = DialectFrames()

    def feed(self, result: Any) -> list[AgentEvent]:
        frames = self._dialect.frames(read_result(result))
        if len(frames) == 1:  # most results: no list of lists to flatten
            return self._decode(frames[0])
        return [event for frame in frames for event in self._decode(frame)]

    def _follows_bare(self, result: dict[str, Any]) -> bool:
        # A bare update completes the pieces still open (frames of their own): decoded.
        return not self._dialect.pieces_open and super()._follows_bare(result)

    def absorb_bare(self) -> None:
        super().absorb_bare()
        self._dialect.note_bare()


def decode_any_result(result: Any, **options: Any) -> list[AgentEvent]:
    """:func:`decode_result` of a unary result, each answer once."""
    return decode_result(normalise_task(read_result(result)), **options)


def decode_any_stream(
    results: Iterable[Any], *, mappers: Sequence[DataPartMapper] = ()
) -> list[AgentEvent]:
    """All events of a complete stream, any dialect (for tests and replays)."""
    decoder = DialectStreamDecoder(mappers=mappers)
    return [event for result in results for event in decoder.feed(result)]


__all__ = ["DialectStreamDecoder", "decode_any_result", "decode_any_stream"]
