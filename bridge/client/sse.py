"""A Server-Sent Events reader as tolerant as trpc's client needs, on bytes.

Go's servers write ``event:`` lines before every ``data:`` (their names are ignored, as
trpc-a2a-go's client ignores them), sse-starlette adds ``: ping`` comments, frames can be
far larger than Go's 640 KiB line limit, and a stream can hold any number of frames of
any kind. Each event's ``data`` lines are joined with ``\\n`` as the SSE spec says.

Lines end at CR, LF or CRLF and nowhere else (the SSE grammar): a frame whose JSON holds
a raw U+0085, U+2028 or form feed — Go escapes only some of them — is one line, where
text-mode line splitting (``str.splitlines``, httpx's ``aiter_lines``) would cut it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator


def _value(field: bytes) -> bytes:
    """A field's value: after the colon, without one leading space."""
    return field[1:] if field.startswith(b" ") else field


def event_data(block: bytes) -> bytes | None:
    """The ``data`` of one event (its lines, ends removed, joined by LF), or None when it
    has no data line (a comment, an ``event:`` line alone)."""
    # The usual events: one data line, alone or last after lines without data (the
    # ``event:`` line of Go's servers).
    if block.startswith(b"data:") and block.find(b"\n") < 0:
        return _value(block[5:])
    # ``find``, not ``in``: a bytes ``in`` tries its operand as an integer first, and the
    # TypeError it makes and drops costs more than the search (once per upstream frame).
    at = block.rfind(b"\ndata:")
    if (
        at >= 0
        and block.find(b"\n", at + 1) < 0
        and not block.startswith(b"data")
        and block.find(b"\ndata", 0, at) < 0
    ):
        return _value(block[at + 6 :])
    data = [
        _value(line[5:]) if line.startswith(b"data:") else b""
        for line in block.split(b"\n")
        if line.startswith(b"data:") or line == b"data"
    ]
    return b"\n".join(data) if data else None


class SseParser:
    """Events out of a ``text/event-stream`` body fed in chunks, as they complete."""

    def __init__(self) -> None:
        self._pending = bytearray()
        self._held_cr = False  # a chunk ended in CR: the next may start with its LF

    def feed(self, chunk: bytes) -> list[bytes]:
        """The ``data`` of each event ``chunk`` completes."""
        if self._held_cr:
            chunk, self._held_cr = b"\r" + chunk, False
        if chunk.find(b"\r") >= 0:
            self._held_cr = chunk.endswith(b"\r")
            chunk = (chunk[:-1] if self._held_cr else chunk).replace(b"\r\n", b"\n")
            chunk = chunk.replace(b"\r", b"\n")
        pending = self._pending
        # A blank line can straddle the old end by one byte; nothing before it is new.
        at = max(len(pending) - 1, 0)
        pending += chunk
        out: list[bytes] = []
        start = 0
        while (end := pending.find(b"\n\n", at)) >= 0:
            data = event_data(bytes(pending[start:end]))
            start = at = end + 2
            if data is not None:
                out.append(data)
        del pending[:start]
        return out

    def end(self) -> list[bytes]:
        """The ``data`` of a last event without its blank line (the body has ended)."""
        blocks, self._pending = bytes(self._pending).split(b"\n\n"), bytearray()
        return [data for block in blocks if (data := event_data(block)) is not None]


async def read_data(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The ``data`` of each event in a ``text/event-stream`` body read in ``chunks``
    (``id:`` and ``retry:`` change nothing for a single request/response stream)."""
    parser = SseParser()
    async for chunk in chunks:
        for data in parser.feed(chunk):
            yield data
    for data in parser.end():
        yield data
