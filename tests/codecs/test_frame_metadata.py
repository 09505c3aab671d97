"""``codecs/a2a/frames.merged``: a frame's metadata overlaid on its artifact's (or its
status message's), answered without a copy when one side is empty."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from trpc_bridge.codecs.a2a.frames import merged

_METADATA = st.dictionaries(
    st.sampled_from(["object_type", "llm_response_id", "tag", "error_code"]),
    st.one_of(st.none(), st.text(max_size=3), st.integers()),
    max_size=3,
)


@given(_METADATA, _METADATA)
def test_merged_is_the_overlay(first: dict[str, Any], second: dict[str, Any]) -> None:
    before = (dict(first), dict(second))
    assert merged(first, second) == {**first, **second}
    assert (first, second) == before  # neither side is written to


@given(_METADATA.filter(bool))
def test_an_empty_side_gives_the_other_as_it_is(metadata: dict[str, Any]) -> None:
    assert merged({}, metadata) is metadata
    assert merged(metadata, {}) is metadata
