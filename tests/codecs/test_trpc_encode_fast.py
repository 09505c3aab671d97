"""The trpc stream encoder's shortcuts write what the general path builds: bare artifact
updates copied from a template (``stream_frames._bare_template``) and DataPart metadata copied
from a built Struct (``encode._data_part_metadata``). Struct maps compare as maps: their
iteration order is upb's, seeded per process, and a copy may iterate another way."""

from __future__ import annotations

import pytest
from a2a.types import Part, TaskArtifactUpdateEvent
from event_strategies import agent_events
from hypothesis import given, settings
from hypothesis import strategies as st
from ordered_json import ordered_json

from trpc_bridge.codecs.a2a.json03 import success_response
from trpc_bridge.codecs.a2a.proto_struct import fill_struct
from trpc_bridge.codecs.encoding import EncodeOptions
from trpc_bridge.codecs.trpc import encode, stream_frames
from trpc_bridge.codecs.trpc.keys import (
    ADK_PREFIX,
    CODE_EXECUTION_RESULT,
    EXECUTABLE_CODE,
    FUNCTION_CALL,
    FUNCTION_RESPONSE,
    PART_TYPE,
)
from trpc_bridge.events import AgentEvent


def same(fast: TaskArtifactUpdateEvent, built: TaskArtifactUpdateEvent) -> None:
    assert fast == built
    assert fast.SerializeToString(deterministic=True) == built.SerializeToString(deterministic=True)
    assert ordered_json(success_response(fast, 1)) == ordered_json(success_response(built, 1))


@settings(max_examples=400, deadline=None)
@given(
    event=agent_events,
    adk_compat=st.booleans(),
    append=st.booleans(),
    ids=st.sampled_from([("task-1", "ctx-1"), ("task-2", "ctx-2"), ("", "")]),
)
def test_an_artifact_update_is_the_one_built(
    event: AgentEvent, adk_compat: bool, append: bool, ids: tuple[str, str]
) -> None:
    if event.is_terminal_error():
        return
    options = EncodeOptions(adk_compat=adk_compat)
    encoded = encode.encode_event(event, options, streaming=True)
    if encoded is None:
        return
    task_id, context_id = ids
    built = stream_frames._built_update(
        encoded, task_id=task_id, context_id=context_id, append=append
    )
    for _ in range(2):  # the template built, then reused
        fast = stream_frames.artifact_update(
            encoded, task_id=task_id, context_id=context_id, append=append
        )
        same(fast, built)


def test_a_preprocessing_frame_comes_from_its_template() -> None:
    event = AgentEvent(object="preprocessing.basic", is_partial=True)
    encoded = encode.encode_event(event, EncodeOptions(), streaming=True)
    assert encoded is not None
    first = stream_frames.artifact_update(encoded, task_id="t1", context_id="c1")
    second = stream_frames.artifact_update(encoded, task_id="t2", context_id="c2")
    assert (False, ("object_type", "preprocessing.basic")) in stream_frames._BARE
    assert (first.task_id, second.task_id, second.context_id) == ("t1", "t2", "c2")
    second.task_id = "t1"
    second.context_id = "c1"
    assert first == second


@pytest.mark.parametrize("adk_compat", [True, False])
@pytest.mark.parametrize(
    "data_type", [FUNCTION_CALL, FUNCTION_RESPONSE, CODE_EXECUTION_RESULT, EXECUTABLE_CODE]
)
def test_a_data_parts_metadata_is_the_one_filled(adk_compat: bool, data_type: str) -> None:
    options = EncodeOptions(adk_compat=adk_compat)
    part = encode._data_part(options, data_type, {"id": "call_1", "name": "f"})
    expected = Part()
    fill_struct(expected.data.struct_value, {"id": "call_1", "name": "f"})
    metadata = {ADK_PREFIX + PART_TYPE: data_type} if adk_compat else {}
    fill_struct(expected.metadata, {**metadata, PART_TYPE: data_type})
    assert part == expected
    assert part.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    )
