"""What a stream has shown and when a text only repeats it, and the dialect response ids
(codecs/dialects/text.py)."""

from __future__ import annotations

import unicodedata
from typing import Literal

from hypothesis import given
from hypothesis import strategies as st

from trpc_bridge.codecs.dialects.text import ResponseIds, ShownText, normalise, weight


def test_response_ids_from_each_dialect() -> None:
    ids = ResponseIds()
    assert ids.read({"llm_response_id": "r1", "adk_event_id": "e0"}) == "r1"
    custom = '{"llm_response_id": "r2"}'
    assert ids.read({"adk_custom_metadata": custom, "adk_event_id": "e2"}) == "r2"
    assert ids.read({"adk_custom_metadata": {"llm_response_id": "r3"}}) == "r3"
    # ADK's final artifact carries only the event id: it maps to the response seen with it.
    assert ids.read({"adk_event_id": "e2"}) == "r2"
    assert ids.read({"adk_event_id": "e9"}) == "e9"
    assert ids.read({"adk_custom_metadata": "not json"}) == ""


def test_strands_pieces_then_the_whole_with_a_newline() -> None:
    shown = ShownText()
    for key, piece in (("m1", "It is"), ("m2", " 20°C"), ("m3", ".")):
        assert shown.copied(piece, "", loose=False) is None
        shown.add(key, piece)
    copied = shown.copied("It is 20°C.\n", "", loose=True)
    assert copied is not None and [u.key for u in copied] == ["m1", "m2", "m3"]
    assert shown.copied("It is 20°C.\n", "", loose=False) is None  # exactly: not the same


def test_a_token_like_an_earlier_one_is_no_copy() -> None:
    shown = ShownText()
    shown.add("m1", "the")
    assert shown.copied(" the", "", loose=False) is None
    assert shown.copied("\n", "", loose=True) is None  # whitespace repeats nothing


def test_reasoning_must_match_when_the_copy_has_some() -> None:
    shown = ShownText()
    shown.add("m1", "answer", "thinking")
    assert shown.copied("answer", "", loose=True) is not None
    assert shown.copied("answer", "thinking", loose=True) is not None
    assert shown.copied("answer", "other", loose=True) is None


_texts = st.text(alphabet=st.sampled_from("ae\u0301é 中😀\n"), min_size=1, max_size=6)


@given(st.lists(_texts, min_size=1, max_size=6), st.sampled_from(["NFC", "NFD"]))
def test_the_whole_repeats_its_pieces_in_any_normal_form(
    pieces: list[str], form: Literal["NFC", "NFD"]
) -> None:
    shown = ShownText()
    for n, piece in enumerate(pieces):
        shown.add(f"m{n}", piece)
    whole = unicodedata.normalize(form, "".join(pieces)) + " \n"
    if normalise(whole):
        assert shown.copied(whole, "", loose=True) is not None
    assert weight(whole) == sum(weight(p) for p in pieces)


_IDS = st.sampled_from(["", "r1", "e1", "e2"])
_ADK_METADATA = st.fixed_dictionaries(
    {},
    optional={
        "llm_response_id": _IDS,
        "adk_event_id": _IDS,
        "adk_custom_metadata": st.one_of(
            st.builds(lambda r: {"llm_response_id": r}, _IDS), st.just("not json")
        ),
    },
)


@given(st.lists(_ADK_METADATA, max_size=4), st.sampled_from([{}, {"llm_response_id": "r9"}]))
def test_response_ids_without_adk_keys_read_as_with_them_empty(
    before: list[dict[str, object]], metadata: dict[str, object]
) -> None:
    """The early answer for metadata without ADK keys is what the ADK path reads when
    those keys hold nothing, whatever ids the stream learnt before."""
    fast, general = ResponseIds(), ResponseIds()
    for seen in before:
        fast.read(seen)
        general.read(seen)
    empty_adk = {**metadata, "adk_custom_metadata": None, "adk_event_id": None}
    assert fast.read(metadata) == general.read(empty_adk)
