"""Shared encodings of the trpc dialect: the state_delta envelope and Go-compatible JSON."""

from __future__ import annotations

import base64
import json

from hypothesis import given
from hypothesis import strategies as st

from trpc_bridge.codecs.trpc.keys import decode_state_delta, encode_state_delta, go_json


def test_state_delta_envelope_matches_reference_s10() -> None:
    envelope = encode_state_delta({"json_string": b'"hello"', "empty_value": b"", "deleted": None})
    assert envelope == {
        "deleted": {"encoding": "nil"},
        "empty_value": {"encoding": "bytes", "payload": ""},
        "json_string": {"encoding": "bytes", "payload": "ImhlbGxvIg=="},
    }
    assert list(envelope) == ["deleted", "empty_value", "json_string"]  # Go sorts map keys


def test_state_delta_decoding_skips_malformed_entries_like_c13() -> None:
    decoded = decode_state_delta(
        {
            "rich-state": {"encoding": "bytes", "payload": "InJlYWR5Ig=="},
            "gone": {"encoding": "nil"},
            "bad": {"encoding": "zip", "payload": "x"},
            "worse": {"encoding": "bytes", "payload": "not base64!"},
            "odd": "string",
        }
    )
    assert decoded == {"rich-state": b'"ready"', "gone": None}
    assert decode_state_delta(["not", "a", "map"]) == {}


@given(st.dictionaries(st.text(max_size=10), st.one_of(st.none(), st.binary(max_size=32))))
def test_state_delta_round_trip(delta: dict[str, bytes | None]) -> None:
    assert decode_state_delta(encode_state_delta(delta)) == delta


def test_go_json_sorts_escapes_and_prints_integral_floats_as_ints() -> None:
    # Reference C03: Go re-serialises object args with sorted keys and HTML escapes.
    assert go_json({"b": 2, "a": "<x>"}) == '{"a":"\\u003cx\\u003e","b":2}'
    assert go_json({"temp": 20.0, "r": 0.5, "s": "20°C & 你好"}) == (
        '{"r":0.5,"s":"20°C \\u0026 你好","temp":20}'
    )


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=10,
    )
)
def test_go_json_is_json_with_the_same_value(value: object) -> None:
    assert json.loads(go_json(value)) == value


def test_payload_is_standard_base64_with_padding() -> None:
    payload = encode_state_delta({"k": b"ab"})["k"]["payload"]
    assert payload == base64.b64encode(b"ab").decode() == "YWI="
