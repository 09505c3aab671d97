"""The consumer's merge of one turn's progress blocks (``docs/specs/tfrs-progress.md`` §6).

Blocks may arrive late, twice, out of order or not at all. :class:`ProgressMerger` keeps
each ``(streamKey, seq)`` once (the first arrival wins), never waits for a missing
``seq``, and exposes a view that depends only on the set of blocks received, not on the
order they came in: the blocks sorted by ``(seq, streamKey)`` and, per ``streamKey``, its
kind, tool, accumulated text and status — where ``done`` / ``aborted`` stick once seen
(the one with the highest ``seq`` wins if both came), so a late ``running`` never reopens
a finished tool call.

Pseudo-envelopes (plain working text, unusable envelopes) have no key: they are kept in
arrival order beside the blocks, once per message id when the message has one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trpc_bridge.codecs.tfrs.envelope import Envelope, Status


@dataclass(frozen=True)
class ProgressItem:
    """One working update as a consumer reads it."""

    envelope: Envelope
    #: The Part's text fallback.
    text: str
    task_id: str = ""
    message_id: str = ""
    #: Why the envelope is a pseudo-envelope (``""`` for a real one).
    problem: str = ""

    @property
    def pseudo(self) -> bool:
        return self.envelope.pseudo


@dataclass(frozen=True)
class StreamView:
    """One ``streamKey`` (``""`` = the default stream of thinking / text / errors)."""

    key: str
    kind: str
    tool: str
    tool_call_id: str
    status: Status
    #: The stream's free text in ``seq`` order (thinking, text, output chunks, errors).
    text: str
    #: The ``seq`` values seen, ascending.
    seqs: tuple[int, ...]


_TERMINAL: frozenset[Status] = frozenset({"done", "aborted"})


def _stream_view(key: str, blocks: list[Envelope]) -> StreamView:
    """``blocks`` sorted by ``seq``."""
    tools = [b for b in blocks if b.kind in ("tool_call", "tool_output_append")]
    first = tools[0] if tools else blocks[0]
    ended = [b for b in blocks if b.status in _TERMINAL]
    return StreamView(
        key=key,
        kind=first.kind,
        tool=next((b.tool for b in tools if b.tool), ""),
        tool_call_id=next((b.tool_call_id for b in tools if b.tool_call_id), ""),
        status=ended[-1].status if ended else "running",
        text="".join(b.text for b in blocks),
        seqs=tuple(b.seq for b in blocks if b.seq is not None),
    )


@dataclass
class ProgressMerger:
    """The merged progress of one turn (one task id)."""

    _blocks: dict[tuple[str, int], Envelope] = field(default_factory=dict)
    _loose: list[ProgressItem] = field(default_factory=list)
    _loose_ids: set[str] = field(default_factory=set)

    def add(self, item: ProgressItem) -> bool:
        """Take one item; ``False`` when it was already there (nothing changed)."""
        if item.pseudo:
            if item.message_id:
                if item.message_id in self._loose_ids:
                    return False
                self._loose_ids.add(item.message_id)
            self._loose.append(item)
            return True
        key = item.envelope.key
        if key in self._blocks:
            return False
        self._blocks[key] = item.envelope
        return True

    @property
    def blocks(self) -> list[Envelope]:
        """Every distinct block, in ``(seq, streamKey)`` order."""
        return [self._blocks[k] for k in sorted(self._blocks, key=lambda k: (k[1], k[0]))]

    @property
    def loose(self) -> list[ProgressItem]:
        """Pseudo-envelopes, in arrival order."""
        return list(self._loose)

    def streams(self) -> dict[str, StreamView]:
        """Per ``streamKey``, in order of each stream's first ``seq``."""
        grouped: dict[str, list[Envelope]] = {}
        for block in self.blocks:
            grouped.setdefault(block.stream_key or "", []).append(block)
        return {key: _stream_view(key, blocks) for key, blocks in grouped.items()}
