"""The SSE reader (``client/sse.py``) on bytes, however the body is cut into chunks and
whichever line ends it uses: events end at a blank line, lines at CR, LF or CRLF only."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator

from hypothesis import given, settings
from hypothesis import strategies as st

from trpc_bridge.client.sse import read_data

_LINE_END = re.compile(rb"\r\n|\r|\n")


def reference(body: bytes) -> list[bytes]:
    """The SSE grammar read line by line over the whole body."""
    out: list[bytes] = []
    data: list[bytes] = []
    lines = _LINE_END.split(body)
    for index, line in enumerate(lines):
        last = index == len(lines) - 1
        if last and not line:
            break  # the body ended with a line end
        if not line:
            if data:
                out.append(b"\n".join(data))
            data = []
            continue
        if line.startswith(b":"):
            continue
        name, _, value = line.partition(b":")
        if name == b"data":
            data.append(value[1:] if value.startswith(b" ") else value)
    if data:  # a last event without its blank line
        out.append(b"\n".join(data))
    return out


async def _chunks(body: bytes, cuts: list[int]) -> AsyncIterator[bytes]:
    at = 0
    for cut in sorted(set(cuts)):
        yield body[at:cut]
        at = cut
    yield body[at:]


async def _read(body: bytes, cuts: list[int]) -> list[bytes]:
    return [data async for data in read_data(_chunks(body, cuts))]


# Field lines of events, with the characters text-mode line splitting would cut at.
_VALUE = st.text(st.sampled_from('ab{}":\x85\u2028\u2029\x0b\x0c\x1c é'), max_size=8)
_LINE = st.one_of(
    _VALUE.map(lambda v: b"data: " + v.encode()),
    _VALUE.map(lambda v: b"data:" + v.encode()),
    st.just(b"data"),
    st.just(b"event: task_artifact_update"),
    st.just(b": ping"),
    st.just(b"id: 7"),
)
_EVENT = st.lists(_LINE, min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_EVENT, max_size=6),
    st.sampled_from([b"\n", b"\r\n", b"\r"]),
    st.booleans(),
    st.lists(st.integers(0, 400), max_size=12),
)
def test_any_chunking_and_line_ends(
    events: list[list[bytes]], end: bytes, closed: bool, cuts: list[int]
) -> None:
    body = b"".join(end.join(lines) + end + end for lines in events)
    if events and not closed:
        body = body[: -2 * len(end)]  # the last event without its blank line
    cuts = [c for c in cuts if c <= len(body)]
    assert asyncio.run(_read(body, cuts)) == reference(body)


def test_a_go_frame_with_a_next_line_character_is_one_frame() -> None:
    """Go escapes U+2028 but not U+0085: the frame must not be cut there."""
    body = 'event: task_artifact_update\ndata: {"text":"a\x85b\u2028c"}\n\n'.encode()
    assert asyncio.run(_read(body, [5, 40])) == ['{"text":"a\x85b\u2028c"}'.encode()]
