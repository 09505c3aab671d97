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
    ChatMessage,
    Choice,
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
def test_delta_constructors_build_what_the_models_build(text: str) -> None:
    """The deltas are validated as one nested document: the same event, the same fields
    set, as building each model."""
    built = {
        "text": AgentEvent(
            id="r1",
            object=ObjectType.CHUNK,
            is_partial=True,
            choices=[Choice(delta=ChatMessage(role=Role.ASSISTANT, content=text))],
        ),
        "reasoning": AgentEvent(
            id="r1",
            object=ObjectType.CHUNK,
            is_partial=True,
            choices=[Choice(delta=ChatMessage(role=Role.ASSISTANT, reasoning_content=text))],
        ),
    }
    made = {
        "text": AgentEvent.text_delta(text, "r1"),
        "reasoning": AgentEvent.reasoning_delta(text, "r1"),
    }
    for kind, expected in built.items():
        event = made[kind]
        assert event.model_fields_set == expected.model_fields_set
        event.event_id, event.timestamp = expected.event_id, expected.timestamp
        assert event == expected
        assert event.choices[0].model_fields_set == expected.choices[0].model_fields_set
        delta = event.choices[0].delta
        assert delta.model_fields_set == expected.choices[0].delta.model_fields_set


def test_delta_constructors_refuse_what_the_models_refuse() -> None:
    with pytest.raises(ValidationError):
        AgentEvent.text_delta(None, "r1")  # type: ignore[arg-type]
