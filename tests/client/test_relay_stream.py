"""The relay's upstream reader splits an event stream as the line reader of the event
path does (``client/sse.py``), whatever the line endings and however the bytes arrive."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator

from hypothesis import given, settings
from hypothesis import strategies as st

from trpc_bridge.client.relay_stream import SseSplitter
from trpc_bridge.client.sse import read_events

_value = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=12)
_line = st.one_of(
    st.tuples(st.just("data"), _value),
    st.tuples(st.just("event"), _value),
    st.tuples(st.just(""), _value),  # a comment
)
_event = st.lists(_line, min_size=1, max_size=4)


def _body(events: list[list[tuple[str, str]]], newline: str, space: bool) -> bytes:
    lines = []
    for event in events:
        for field, value in event:
            lines.append(f"{field}:{' ' if space else ''}{value}")
        lines.append("")
    return newline.join(lines).encode() + newline.encode()


async def _lines(body: str) -> AsyncIterator[str]:
    """The lines as httpx reads them: ended by CR, LF or CRLF only."""
    for line in re.split(r"\r\n|\r|\n", body)[:-1]:
        yield line


def _expected(body: bytes) -> list[bytes]:
    async def read() -> list[bytes]:
        return [e.data.encode() async for e in read_events(_lines(body.decode()))]

    return asyncio.run(read())


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_event, max_size=6),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
    st.lists(st.integers(1, 40), max_size=20),
)
def test_any_chunking_gives_the_events_of_the_line_reader(
    events: list[list[tuple[str, str]]], newline: str, space: bool, cuts: list[int]
) -> None:
    body = _body(events, newline, space)
    splitter = SseSplitter()
    datas: list[bytes] = []
    start = 0
    for size in cuts:
        datas += splitter.feed(body[start : start + size])
        start += size
    datas += splitter.feed(body[start:])
    datas += splitter.close()
    assert datas == _expected(body)


def test_a_last_event_without_its_blank_line_is_read() -> None:
    splitter = SseSplitter()
    assert splitter.feed(b'event: x\ndata: {"a":1}\n\ndata: {"b"') == [b'{"a":1}']
    assert splitter.feed(b":2}\n") == []
    assert splitter.close() == [b'{"b":2}']
