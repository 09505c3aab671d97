"""A Server-Sent Events reader as tolerant as trpc's client needs.

Go's servers write ``event:`` lines before every ``data:`` (their names are ignored, as
trpc-a2a-go's client ignores them), sse-starlette adds ``: ping`` comments, frames can be
far larger than Go's 640 KiB line limit, and a stream can hold any number of frames of
any kind. Each event's ``data`` lines are joined with ``\\n`` as the SSE spec says.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str


async def read_events(lines: AsyncIterator[str]) -> AsyncIterator[SseEvent]:
    """Events from the lines of an ``text/event-stream`` body (line ends stripped)."""
    name = ""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield SseEvent(name or "message", "\n".join(data))
            name, data = "", []
            continue
        if line.startswith(":"):
            continue  # comment / keep-alive
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
        # `id:` and `retry:` change nothing for a single request/response stream.
    if data:  # a last event without its blank line
        yield SseEvent(name or "message", "\n".join(data))
