"""The event model: constructors produce trpc-shaped events; JSON round-trips losslessly."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from trpc_bridge.events import (
    AgentEvent,
    AgentRequest,
    ContentPart,
    ObjectType,
    Role,
    Tag,
)


def test_text_delta_is_a_partial_chunk() -> None:
    event = AgentEvent.text_delta("Hel", "chatcmpl-1")
    assert event.object == ObjectType.CHUNK
    assert event.is_partial and not event.done
    assert event.choices[0].delta.content == "Hel"
    assert event.choices[0].delta.role == Role.ASSISTANT


def test_tool_call_serialises_mapping_arguments_to_a_json_string() -> None:
    event = AgentEvent.tool_call("get_weather", {"city": "北京"}, call_id="c1", response_id="r")
    call = event.choices[0].message.tool_calls[0]
    assert call.function.arguments == '{"city": "\\u5317\\u4eac"}'
    assert json.loads(call.function.arguments) == {"city": "北京"}
    assert event.object == ObjectType.COMPLETION and not event.is_partial


def test_tool_result_has_no_response_id_by_default_like_trpc() -> None:
    event = AgentEvent.tool_result("c1", "get_weather", {"temp": "20°C"})
    assert event.id == ""
    assert event.choices[0].message.content == '{"temp": "20°C"}'
    assert event.choices[0].message.role == Role.TOOL


def test_code_events_carry_trpc_tags() -> None:
    assert AgentEvent.code("print(1)").has_tag(Tag.CODE)
    assert AgentEvent.code_result("1\n").has_tag(Tag.CODE_RESULT)
    assert AgentEvent(tag="planner;trace").tags == ["planner", "trace"]


def test_failure_is_terminal() -> None:
    event = AgentEvent.failure("boom", code="E1")
    assert event.is_terminal_error()
    assert not AgentEvent.text_delta("x", "r").is_terminal_error()


def test_json_line_leaves_out_empty_fields() -> None:
    line = AgentEvent.text_delta("Hi", "r").to_json_line()
    assert json.loads(line) == {
        "id": "r",
        "object": "chat.completion.chunk",
        "is_partial": True,
        "choices": [{"delta": {"role": "assistant", "content": "Hi"}}],
    }


_text = st.text(max_size=20)
_delta = st.dictionaries(
    st.text(max_size=8), st.one_of(st.none(), st.binary(max_size=16)), max_size=4
)


@given(
    content=_text,
    reasoning=_text,
    tag=_text,
    delta=_delta,
    partial=st.booleans(),
)
def test_json_round_trip_is_lossless(
    content: str, reasoning: str, tag: str, delta: dict[str, bytes | None], partial: bool
) -> None:
    event = AgentEvent.text_delta(content, "r")
    event.choices[0].delta.reasoning_content = reasoning
    event.tag = tag
    event.state_delta = delta
    event.is_partial = partial
    assert AgentEvent.model_validate_json(event.model_dump_json()) == event


def test_request_round_trips_binary_content() -> None:
    request = AgentRequest(
        text="hi", content_parts=[ContentPart(type="image", data=b"\x89PNG", mime_type="image/png")]
    )
    assert AgentRequest.model_validate_json(request.model_dump_json()) == request


@pytest.mark.parametrize("text", ["", "hi", "你好 😀"])
def test_delta_constructors_build_what_validation_builds(text: str) -> None:
    """The delta constructors make the event that validating its JSON makes."""
    made = {
        "content": AgentEvent.text_delta(text, "r1"),
        "reasoning_content": AgentEvent.reasoning_delta(text, "r1"),
    }
    for key, event in made.items():
        document = {
            "id": "r1",
            "object": ObjectType.CHUNK,
            "is_partial": True,
            "choices": [{"delta": {"role": Role.ASSISTANT, key: text}}],
            "event_id": event.event_id,
            "timestamp": event.timestamp,
        }
        assert AgentEvent.model_validate(document) == event


def test_validation_refuses_what_the_model_refuses() -> None:
    """Data from outside goes through pydantic: wrong types, unknown keys and unknown
    literal values are refused."""
    for document in (
        {"id": None},
        {"choices": [{"delta": {"content": 3}}]},
        {"unknown": 1},
        {"task_state": "sleeping"},
        {"choices": [{"message": {"content_parts": [{"type": "video"}]}}]},
    ):
        with pytest.raises(ValidationError):
            AgentEvent.model_validate(document)


def test_copies_share_or_copy_nested_values() -> None:
    event = AgentEvent.text_delta("a", "r1")
    shallow = event.model_copy(update={"id": "r2"})
    deep = event.model_copy(deep=True)
    assert (shallow.id, event.id) == ("r2", "r1")
    assert shallow.choices is event.choices
    assert deep == event and deep.choices[0] is not event.choices[0]
