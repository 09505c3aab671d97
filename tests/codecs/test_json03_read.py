"""The 0.3 JSON reader (``codecs/a2a/json03_read.py``) makes the protobuf a2a-sdk makes of
the same JSON (its pydantic 0.3 models, then ``to_core_*``): for every frame the 0.3
writer writes of generated frames and of the golden vectors, for Go's recorded frames,
and for generated ``message/send`` params; JSON it does not read (snake_case keys, bytes,
a push config, a wrong type) is refused as not plain, for a2a-sdk's path to read."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as types_v03
from a2a.types import Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from proto_strategies import frames, json_values, messages, text
from test_vectors_decode import DECODE_CASES
from test_vectors_encode import ENCODE_VECTORS, load, run_stream

from trpc_bridge.codecs.a2a import json03_read
from trpc_bridge.codecs.a2a.json03 import result_to_json

_READERS: dict[str, Any] = {
    "artifact-update": (
        json03_read.artifact_update,
        types_v03.TaskArtifactUpdateEvent,
        conversions.to_core_task_artifact_update_event,
    ),
    "status-update": (
        json03_read.status_update,
        types_v03.TaskStatusUpdateEvent,
        conversions.to_core_task_status_update_event,
    ),
    "message": (json03_read.message, types_v03.Message, conversions.to_core_message),
}


def _same(document: dict[str, Any]) -> bool:
    """Both paths give the same protobuf (True), or the reader says not plain (False)."""
    read, model, to_core = _READERS[document["kind"]]
    expected = to_core(model.model_validate(copy.deepcopy(document)))
    try:
        got = read(copy.deepcopy(document))
    except json03_read.NotPlain:
        return False
    assert got == expected
    assert got.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    )
    return True


def _written(frame: Any) -> dict[str, Any]:
    """``frame`` as the 0.3 stream writer writes it, parsed."""
    document: dict[str, Any] = orjson.loads(orjson.dumps(result_to_json(frame), default=float))
    return document


@settings(max_examples=400, deadline=None)
@given(frames())
def test_written_frames_read_as_the_sdk_reads_them(
    frame: TaskStatusUpdateEvent | TaskArtifactUpdateEvent | Message | Task,
) -> None:
    assume(not isinstance(frame, Task))  # not a stream frame the relay reads itself
    try:
        written = _written(frame)
    except ValueError:  # a part without content: no writer writes it
        assume(False)
    _same(written)


_STREAMS = [p for p in ENCODE_VECTORS if load(p).get("kind") == "stream"]


@pytest.mark.parametrize("path", _STREAMS, ids=[p.stem for p in _STREAMS])
def test_the_bridges_own_frames_are_plain(path: Any) -> None:
    """Every frame of every stream vector as the bridge writes it: read here."""
    for frame in run_stream(load(path)):
        assert _same(_written(frame)), frame


_RECORDED = [
    (case_id, result)
    for case_id, vector in DECODE_CASES
    if vector.get("mode") == "stream" and isinstance(vector.get("input"), list)
    for result in vector["input"]
    if result.get("kind") in _READERS
]


@pytest.mark.parametrize("result", [r for _, r in _RECORDED], ids=[i for i, _ in _RECORDED])
def test_recorded_frames_read_as_the_sdk_reads_them(result: dict[str, Any]) -> None:
    try:
        _same(result)
    except Exception as exc:  # a2a-sdk refuses it: then it must not be plain here
        with pytest.raises(json03_read.NotPlain):
            _READERS[result["kind"]][0](copy.deepcopy(result))
        assert exc is not None


@st.composite
def _params(draw: st.DrawFn) -> dict[str, Any]:
    try:
        message = _written(draw(messages()))
    except ValueError:  # a part without content: no writer writes it
        assume(False)
    params: dict[str, Any] = {"message": message}
    if draw(st.booleans()):
        configuration: dict[str, Any] = {}
        if draw(st.booleans()):
            configuration["acceptedOutputModes"] = draw(st.lists(text, max_size=2))
        if draw(st.booleans()):
            configuration["blocking"] = draw(st.booleans())
        if draw(st.booleans()):
            configuration["historyLength"] = draw(st.integers(-5, 50))
        params["configuration"] = configuration
    if draw(st.booleans()):
        params["metadata"] = draw(st.dictionaries(text, json_values, max_size=3))
    return params


@settings(max_examples=300, deadline=None)
@given(_params())
def test_send_params_read_as_the_sdk_reads_them(params: dict[str, Any]) -> None:
    document = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": params}
    expected = conversions.to_core_send_message_request(
        types_v03.SendMessageRequest.model_validate(copy.deepcopy(document))
    )
    try:
        got = json03_read.send_params(copy.deepcopy(params))
    except json03_read.NotPlain:
        return
    assert got == expected


@pytest.mark.parametrize(
    "params",
    [
        {"message": {"message_id": "m", "role": "user", "parts": []}},
        {"message": {"messageId": "m", "role": "robot", "parts": []}},
        {"message": {"messageId": "m", "role": "user", "parts": [{"kind": "text", "text": 3}]}},
        {
            "message": {
                "messageId": "m",
                "role": "user",
                "parts": [{"kind": "file", "file": {"bytes": "aGk="}}],
            }
        },
        {
            "message": {"messageId": "m", "role": "user", "parts": []},
            "configuration": {"pushNotificationConfig": {"url": "https://x"}},
        },
        {
            "message": {"messageId": "m", "role": "user", "parts": []},
            "configuration": {"historyLength": True},
        },
    ],
    ids=["snake_case", "role", "text type", "bytes", "push config", "bool history"],
)
def test_what_is_not_plain_is_left_to_the_sdk(params: dict[str, Any]) -> None:
    with pytest.raises(json03_read.NotPlain):
        json03_read.send_params(params)
