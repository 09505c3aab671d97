"""The consolidated-final-text rule and the dialect response ids (codecs/dialects/text.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trpc_bridge.codecs.dialects.text import FinalText, ResponseIds, Seen, partial_flag


def test_trpc_python_partial_flag_is_a_bool_or_a_string() -> None:
    assert partial_flag({"partial": "True"}) is True
    assert partial_flag({"partial": False}) is False
    assert partial_flag({"partial": "false"}) is False
    assert partial_flag({"partial": "maybe"}) is None
    assert partial_flag({}) is None


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


def test_adk_pieces_then_full_status_then_final_artifact() -> None:
    rule = FinalText()
    assert [rule.piece("r", t) for t in ("It is", " 20°C")] == [Seen.PIECE, Seen.PIECE]
    assert rule.piece("r", "It is 20°C", unmarked=True) is Seen.COMPLETE
    assert rule.whole("r", "It is 20°C") is Seen.REPEAT
    assert rule.owner("It is 20°C") == "r"


def test_marked_pieces_never_complete() -> None:
    rule = FinalText()
    assert [rule.piece("r", "ab") for _ in range(2)] == [Seen.PIECE, Seen.PIECE]
    assert rule.whole("r", "abab") is Seen.COMPLETE


def test_a2a_append_false_with_other_text_replaces() -> None:
    rule = FinalText()
    rule.piece("a", "Hel")
    assert rule.whole("a", "Hello!", replaces=True) is Seen.REPLACE
    assert rule.whole("b", "fresh", replaces=True) is Seen.COMPLETE


@given(st.lists(st.text(min_size=1), min_size=1, max_size=8))
def test_the_whole_after_its_pieces_shows_nothing_new(pieces: list[str]) -> None:
    rule = FinalText()
    for piece in pieces:
        rule.piece("r", piece)
    whole = "".join(pieces)
    assert rule.whole("r", whole) is Seen.COMPLETE
    assert rule.whole("r", whole) is Seen.REPEAT
    assert rule.piece("r", whole) is Seen.REPEAT
    assert rule.owner(whole) == "r"
