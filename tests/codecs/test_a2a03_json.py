"""``codecs/a2a03_json`` writes the bytes a2a-sdk's 0.3 compat path writes.

The SDK path: ``to_compat_stream_response(to_stream_response(frame), id)`` (or
``SendMessageSuccessResponse`` around ``to_compat_task`` / ``to_compat_message``) dumped
with ``model_dump_json(by_alias=True, exclude_none=True)``. Compared byte for byte, for the
frames of every golden encode vector and for generated frames (Struct maps iterate in the
same per-process order on both sides, so even key order inside metadata must agree).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as types_v03
from a2a.types import (
    Message,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.proto_utils import to_stream_response
from hypothesis import given, settings
from hypothesis import strategies as st
from proto_strategies import frames, messages, tasks, text
from starlette.responses import JSONResponse
from test_vectors_encode import ENCODE_VECTORS, events_of, load, options_of, run_stream

from trpc_bridge.codecs.a2a.json03 import (
    STATES_03,
    Frame,
    JsonRpcId,
    json_bytes,
    message_to_json,
    success_response,
    unary_response,
)
from trpc_bridge.codecs.encoding import RunTarget, as_proto
from trpc_bridge.codecs.trpc.runs import StreamEncoder, UnaryEncoder, unary_task_id


def both(frame: Frame, request_id: JsonRpcId) -> tuple[bytes, bytes]:
    """(ours, the SDK's) for ``frame``. The SDK wraps a stream frame into a
    ``StreamResponse`` (a copy, whose Struct maps may iterate in another order), so both
    sides serialise that copy."""
    if isinstance(frame, Task):
        response: Any = types_v03.SendMessageSuccessResponse(
            id=request_id, result=conversions.to_compat_task(frame)
        )
        copy: Frame = frame
    else:
        wrapped = to_stream_response(frame)
        copy = getattr(wrapped, wrapped.WhichOneof("payload"))
        response = conversions.to_compat_stream_response(wrapped, request_id)
    sdk = response.model_dump_json(by_alias=True, exclude_none=True).encode()
    return success_response(copy, request_id), sdk


def frames_of(path: Path) -> list[Frame]:
    vector = load(path)
    kind = vector.get("kind")
    if kind == "stream" and vector.get("wire") != "1.0":
        return list(run_stream(vector))
    if kind == "submitted":
        encoder = StreamEncoder(RunTarget("task-1", "ctx-1", options_of(vector)))
        return [
            as_proto(f)
            for f in encoder.start(app_name=vector["app_name"], user_id=vector["user_id"])
        ]
    if kind == "unary":
        unary = UnaryEncoder(RunTarget("task-1", "ctx-1", options_of(vector)))
        for event in events_of(vector):
            if not unary.add(event):
                break
        return [unary.result(context_id="ctx-1", task_id=unary_task_id("req-message-1"))]
    return []


FRAME_VECTORS = [p for p in ENCODE_VECTORS if frames_of(p)]


@pytest.mark.parametrize("path", FRAME_VECTORS, ids=[p.stem for p in FRAME_VECTORS])
@pytest.mark.parametrize("request_id", ["req-1", 7, None])
def test_vector_frames_are_byte_identical(path: Path, request_id: JsonRpcId) -> None:
    for frame in frames_of(path):
        ours, sdk = both(frame, request_id)
        assert ours == sdk


def test_state_names_match_the_sdk() -> None:
    for state in TaskState.values():
        status = TaskStatus(state=state)
        expected = conversions.to_compat_task_status(status).state.value
        assert STATES_03.get(state, "unknown") == expected


# --- generated frames -------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(frame=frames(), request_id=st.one_of(st.none(), text, st.integers(-(2**63), 2**63 - 1)))
def test_generated_frames_are_byte_identical(frame: Frame, request_id: JsonRpcId) -> None:
    try:
        ours, sdk = both(frame, request_id)
    except ValueError:  # e.g. a part without content: the SDK fails, so must we
        ours, sdk = b"", b""
        with pytest.raises(ValueError):
            success_response(frame, request_id)
    assert ours == sdk


@settings(max_examples=300, deadline=None)
@given(message=messages())
def test_a_request_message_is_the_sdk_models_dump(message: Message) -> None:
    """The client's 0.3 request message: what ``model_dump(mode="json")`` of the SDK's 0.3
    model gives, written the same by orjson (the proxy's client) and json.dumps (httpx)."""
    try:
        sdk = conversions.to_compat_message(message).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
    except ValueError:  # e.g. a part without content: the SDK fails, so must we
        with pytest.raises(ValueError):
            message_to_json(message)
        return
    ours = message_to_json(message)
    assert json_bytes(ours) == orjson.dumps(sdk)
    assert json.dumps(ours) == json.dumps(sdk)


def test_infinite_numbers_fail_as_in_the_sdk() -> None:
    frame = TaskStatusUpdateEvent(task_id="t", context_id="c")
    frame.metadata.update({"x": float("inf")})
    with pytest.raises(ValueError):
        both(frame, 1)


def test_output_is_json() -> None:
    frame = TaskStatusUpdateEvent(task_id="t", context_id="c")
    assert json.loads(success_response(frame, "r"))["result"]["kind"] == "status-update"


# --- unary results -----------------------------------------------------------------------


def sdk_unary(result: Message | Task, request_id: JsonRpcId) -> bytes:
    """The SDK's 0.3 ``message/send`` answer: the result's 0.3 model dumped in JSON mode,
    rendered by Starlette's ``JSONResponse`` (``id`` kept when null, as the bridge does)."""
    compat = (
        conversions.to_compat_task(result)
        if isinstance(result, Task)
        else conversions.to_compat_message(result)
    )
    dumped = compat.model_dump(mode="json", by_alias=True, exclude_none=True)
    return bytes(JSONResponse({"id": request_id, "jsonrpc": "2.0", "result": dumped}).body)


unary_results = st.one_of(messages(), tasks())


@settings(max_examples=300, deadline=None)
@given(
    result=unary_results, request_id=st.one_of(st.none(), text, st.integers(-(2**63), 2**63 - 1))
)
def test_generated_unary_results_are_byte_identical(
    result: Message | Task, request_id: JsonRpcId
) -> None:
    try:
        sdk = sdk_unary(result, request_id)
    except ValueError:  # e.g. a part without content: the SDK fails, so must we
        with pytest.raises(ValueError):
            unary_response(result, request_id)
        return
    assert unary_response(result, request_id) == sdk


@pytest.mark.parametrize("number", [1e-05, -3.5e-07, 9.99e-05, 1e-04, 5e-324, 0.5, 1e16, 1e22, 0.0])
def test_numbers_are_spelled_as_each_sdk_writer_spells_them(number: float) -> None:
    """json.dumps (unary) writes 1e-05 where pydantic (stream frames) writes 0.00001."""
    task = Task(id="t", context_id="c")
    task.metadata.update({"n": number})
    frame = TaskStatusUpdateEvent(task_id="t", context_id="c")
    frame.metadata.update({"n": number})
    assert unary_response(task, 1) == sdk_unary(task, 1)
    assert json.dumps(number).encode() in unary_response(task, 1)
    ours, sdk = both(frame, 1)
    assert ours == sdk
