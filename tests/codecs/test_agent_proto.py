"""The event model ⇄ ``trpc_bridge.v1`` messages: lossless both ways, golden bytes, and
precise errors for messages that violate the model."""

from __future__ import annotations

import base64
import math
import time
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_files import VECTORS, load_vector

from trpc_bridge.agent import Skill
from trpc_bridge.codecs.agent_proto import (
    ProtoModelError,
    event_from_proto,
    event_to_proto,
    info_from_proto,
    info_to_proto,
    request_from_proto,
    request_to_proto,
    timestamp_from_proto,
    timestamp_to_proto,
)
from trpc_bridge.events import (
    AgentEvent,
    AgentRequest,
    ChatMessage,
    Choice,
    ContentPart,
    FunctionCall,
    ResponseError,
    ToolCall,
    Usage,
)
from trpc_bridge.v1 import agent_pb2 as pb

VECTOR = VECTORS / "P01-agent-proto.json"

_text = st.text(max_size=12)
_int32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
# Every time after 2**24 s (mid-July 1970) up to the end of year 9999: exact at ns.
_timestamps = st.floats(min_value=2.0**24, max_value=253_402_300_799.0)
_parts = st.builds(
    ContentPart,
    type=st.sampled_from(["text", "image", "audio", "file"]),
    text=_text,
    data=st.none() | st.binary(max_size=8),
    url=_text,
    mime_type=_text,
    name=_text,
)
_calls = st.builds(
    ToolCall,
    id=_text,
    type=_text,
    function=st.builds(FunctionCall, name=_text, arguments=_text),
)
_messages = st.builds(
    ChatMessage,
    role=_text,
    content=_text,
    reasoning_content=_text,
    tool_calls=st.lists(_calls, max_size=2),
    tool_id=_text,
    tool_name=_text,
    content_parts=st.lists(_parts, max_size=2),
)
_choices = st.builds(
    Choice,
    index=_int32,
    message=_messages,
    delta=_messages,
    finish_reason=st.none() | _text,
)
_int64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_usage = st.builds(Usage, prompt_tokens=_int64, completion_tokens=_int64, total_tokens=_int64)
_errors = st.builds(
    ResponseError,
    type=_text,
    message=_text,
    code=st.none() | _text,
    param=st.none() | _text,
)
events = st.builds(
    AgentEvent,
    id=_text,
    object=_text,
    choices=st.lists(_choices, max_size=2),
    is_partial=st.booleans(),
    done=st.booleans(),
    error=st.none() | _errors,
    tag=_text,
    state_delta=st.dictionaries(_text, st.none() | st.binary(max_size=8), max_size=3),
    author=_text,
    invocation_id=_text,
    # Empty means "assign one" on the wire; the model's own default is never empty.
    event_id=_text.filter(bool),
    timestamp=_timestamps,
    usage=st.none() | _usage,
)
_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: not x.is_integer())
    | _text
)
_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=10,
)
requests = st.builds(
    AgentRequest,
    text=_text,
    content_parts=st.lists(_parts, max_size=2),
    context_id=_text,
    user_id=_text,
    invocation_id=_text,
    message_id=_text,
    interaction_spec_version=st.none() | _text,
    metadata=st.dictionaries(_text, _json, max_size=3),
)


def _over_the_wire(message: Any) -> Any:
    return type(message).FromString(message.SerializeToString())


@settings(max_examples=300)
@given(events)
def test_any_event_round_trips(event: AgentEvent) -> None:
    assert event_from_proto(_over_the_wire(event_to_proto(event))) == event


@given(requests)
def test_any_request_round_trips(request: AgentRequest) -> None:
    assert request_from_proto(_over_the_wire(request_to_proto(request))) == request


def test_agent_info_round_trips() -> None:
    skills = (Skill("get_weather", "Current temperature.", ("tool",)), Skill("chat", "", ()))
    info = _over_the_wire(info_to_proto("weather-agent", "Weather", skills))
    assert info_from_proto(info) == ("weather-agent", "Weather", skills)


@given(st.floats(min_value=-62_135_596_800.0, max_value=2.0**24))
def test_early_timestamps_keep_nanoseconds(seconds: float) -> None:
    """Rounded to the nearest nanosecond, then to the nearest float."""
    back = timestamp_from_proto(timestamp_to_proto(seconds))
    assert math.isclose(back, seconds, rel_tol=0, abs_tol=0.5e-9 + math.ulp(seconds))


@pytest.mark.parametrize("seconds", [math.nan, math.inf, -math.inf, 1e12, -1e12])
def test_timestamps_without_a_protobuf_timestamp_are_refused(seconds: float) -> None:
    with pytest.raises(ProtoModelError, match="timestamp"):
        event_to_proto(AgentEvent(timestamp=seconds))


def test_choice_index_outside_int32_is_refused() -> None:
    with pytest.raises(ProtoModelError):
        event_to_proto(AgentEvent(choices=[Choice(index=2**31)]))


def test_token_counts_outside_int64_are_refused() -> None:
    with pytest.raises(ProtoModelError):
        event_to_proto(AgentEvent(usage=Usage(prompt_tokens=2**63)))


def test_non_json_metadata_is_refused() -> None:
    with pytest.raises(ProtoModelError, match="metadata"):
        request_to_proto(AgentRequest(metadata={"raw": b"\x00"}))


def test_an_unknown_content_part_type_violates_the_model() -> None:
    message = pb.AgentEvent(
        choices=[pb.Choice(message=pb.ChatMessage(content_parts=[pb.ContentPart(type="video")]))]
    )
    with pytest.raises(ProtoModelError, match="'video'"):
        event_from_proto(message)


def test_timestamp_nanos_out_of_range_violate_the_model() -> None:
    message = pb.AgentEvent()
    message.timestamp.seconds, message.timestamp.nanos = 1, 1_000_000_000
    with pytest.raises(ProtoModelError, match="nanos"):
        event_from_proto(message)


def test_what_a_foreign_agent_may_leave_out() -> None:
    """Unset event_id / timestamp: a fresh id and the time of receipt; an empty content
    part type is text; an absent delta is an empty message."""
    before = time.time()
    event = event_from_proto(
        pb.AgentEvent(
            choices=[pb.Choice(message=pb.ChatMessage(content_parts=[pb.ContentPart(text="x")]))]
        )
    )
    assert len(event.event_id) == 32
    assert event_from_proto(pb.AgentEvent()).event_id != event.event_id
    assert before <= event.timestamp <= time.time()
    assert event.choices[0].message.content_parts[0].type == "text"
    assert event.choices[0].delta == ChatMessage()


@pytest.mark.parametrize("case", load_vector(VECTOR)["cases"], ids=lambda case: case["name"])
def test_golden_vector(case: dict[str, Any]) -> None:
    """The model JSON encodes to exactly these bytes (deterministic serialisation), whose
    proto JSON is the readable form; the bytes decode back to the model event."""
    event = AgentEvent.model_validate(case["event"])
    message = event_to_proto(event)
    assert MessageToDict(message, preserving_proto_field_name=True) == case["proto_json"]
    wire = base64.b64decode(case["proto_base64"])
    assert message.SerializeToString(deterministic=True) == wire
    assert event_from_proto(pb.AgentEvent.FromString(wire)) == event
