"""``parse_json`` reads with orjson where orjson gives exactly what ``json`` gives: the
same values for any JSON text, the same refusals for what is not."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trpc_bridge.json_body import BodyError, parse_json

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),  # past 64 bits too
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same types (1 is not 1.0 here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return bool(a == b)


@settings(max_examples=500, deadline=None)
@given(_JSON, st.booleans())
def test_the_values_of_json(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    expected = json.loads(text)
    assert _same(parse_json(text.encode()), expected)
    assert _same(parse_json(text), expected)


@pytest.mark.parametrize(
    "body",
    [b"NaN", b"[1e400]", b'{"a": Infinity}', b"\xff", b"[1,", b"", b'"\\ud800" x'],
)
def test_what_is_not_json_is_refused(body: bytes) -> None:
    with pytest.raises(BodyError):
        parse_json(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"id":"task-1-1796151470573611511","n":[-18446744073709551616, 17961514705736115]}',
        b'{"a": \n -123456789012345678901234, "b": "x:1234567890123456789012"}',
        b'[12345678901234567890123,"{12345678901234567890123"]',
        b"123456789012345678901234",
    ],
)
def test_long_digit_runs_read_as_json_reads_them(body: bytes) -> None:
    """In a string they are text (orjson reads it); as a number, an integer kept exact."""
    assert _same(parse_json(body), json.loads(body))


def test_a_lone_surrogate_escape_reads_as_json_reads_it() -> None:
    """orjson refuses it; the json path accepts it (check_json refuses it later)."""
    assert parse_json(b'"\\ud800"') == json.loads('"\\ud800"')


def test_deep_nesting_reads_as_json_reads_it() -> None:
    body = b"[" * 950 + b"]" * 950
    try:
        expected: Any = json.loads(body)
    except RecursionError:
        with pytest.raises(BodyError):
            parse_json(body)
    else:
        assert parse_json(body) == expected
