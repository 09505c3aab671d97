"""Golden vectors of the decode half (C01–C13, V1-01/V1-02) and of the client request
(Q01/Q02), from ``tests/vectors/*.json``.

Decoded events are compared in Go's JSON field names (``model.Response`` tags), exactly on
the fields the vector gives. Where the bridge deliberately does better than trpc-agent-go's
v0 client, the vector has ``expect_bridge`` next to Go's ``expect`` and lists the deviation.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as types_v03
from google.protobuf.json_format import MessageToDict
from vector_files import VECTORS

from trpc_bridge.codecs.trpc.decode import decode_result, decode_stream
from trpc_bridge.codecs.trpc.request import request_to_message
from trpc_bridge.events import AgentEvent, AgentRequest, ChatMessage


def _load(direction: str) -> list[dict[str, Any]]:
    vectors = [json.loads(p.read_text()) for p in sorted(VECTORS.glob("*.json"))]
    return [v for v in vectors if v.get("direction") == direction]


def _cases(vector: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(vector["id"], vector)] + [
        (f"{vector['id']}:{variant['name']}", variant) for variant in vector.get("variants", [])
    ]


DECODE_CASES = [case for v in _load("decode") for case in _cases(v)]


# --- Go JSON view of an event ---------------------------------------------------------


def _message_view(message: ChatMessage) -> dict[str, Any]:
    view: dict[str, Any] = {}
    for key in ("role", "content", "reasoning_content"):
        if getattr(message, key):
            view[key] = getattr(message, key)
    if message.tool_calls:
        view["tool_calls"] = [
            {
                "type": c.type,
                "id": c.id,
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in message.tool_calls
        ]
    for key in ("tool_id", "tool_name"):
        if getattr(message, key):
            view[key] = getattr(message, key)
    return view


def go_view(event: AgentEvent) -> dict[str, Any]:
    """The event as trpc-agent-go would marshal it (omitempty fields left out)."""
    view: dict[str, Any] = {
        "id": event.id,
        "object": event.object,
        "done": event.done,
        "is_partial": event.is_partial,
    }
    choices = []
    for choice in event.choices:
        entry = {}
        for key in ("message", "delta"):
            part = _message_view(getattr(choice, key))
            if part:
                entry[key] = part
        choices.append(entry)
    if choices:
        view["choices"] = choices
    if event.error is not None:
        view["error"] = {"type": event.error.type, "message": event.error.message}
        if event.error.code is not None:
            view["error"]["code"] = event.error.code
    if event.tag:
        view["tag"] = event.tag
    if event.state_delta:
        view["state_delta"] = {
            k: None if v is None else base64.b64encode(v).decode()
            for k, v in event.state_delta.items()
        }
    if event.usage is not None:
        view["usage"] = event.usage.model_dump()
    return view


def _matches(actual: list[AgentEvent], expected: list[dict[str, Any]]) -> None:
    views = [go_view(e) for e in actual]
    assert len(views) == len(expected), json.dumps(views, ensure_ascii=False, indent=1)
    for view, want in zip(views, expected, strict=True):
        given = {k: v for k, v in want.items() if k != "note"}
        got = {k: view.get(k) for k in given}
        assert got == given, json.dumps(view, ensure_ascii=False)


def _decode(case: dict[str, Any]) -> list[AgentEvent]:
    if case["mode"] == "unary":
        return decode_result(case["input"])
    return decode_stream(case["input"])


@pytest.mark.parametrize(("name", "case"), DECODE_CASES, ids=[n for n, _ in DECODE_CASES])
def test_decode_vector(name: str, case: dict[str, Any]) -> None:
    _matches(_decode(case), case.get("expect_bridge", case["expect"]))


@pytest.mark.parametrize("vector", _load("decode"), ids=lambda v: v["id"])
def test_every_bridge_deviation_is_listed(vector: dict[str, Any]) -> None:
    deviates = "expect_bridge" in vector or any(
        "expect_bridge" in variant for variant in vector.get("variants", [])
    )
    assert deviates == bool(vector["deviations"])


def _as_v10(frame: dict[str, Any]) -> dict[str, Any] | None:
    """The same frame in the 1.0 shape, via a2a-sdk's own 0.3 → 1.0 conversion; ``None``
    for frames its pydantic 0.3 models reject (``parts: null``, unknown kinds)."""
    if "kind" not in frame:
        return None
    try:
        wrapped = types_v03.SendStreamingMessageSuccessResponse.model_validate(
            {"jsonrpc": "2.0", "id": "r1", "result": frame}
        )
    except ValueError:
        return None
    as_v10: dict[str, Any] = MessageToDict(conversions.to_core_stream_response(wrapped))
    return as_v10


@pytest.mark.parametrize(("name", "case"), DECODE_CASES, ids=[n for n, _ in DECODE_CASES])
def test_decode_vector_in_the_1_0_shape(name: str, case: dict[str, Any]) -> None:
    if case["mode"] == "unary":
        pytest.skip("unary results are covered through the 0.3 shape")
    frames = [_as_v10(f) for f in case["input"]]
    if None in frames:
        pytest.skip("a frame a2a-sdk's 0.3 models cannot represent")
    _matches(decode_stream(frames), case.get("expect_bridge", case["expect"]))


# --- request vectors -----------------------------------------------------------------


@pytest.mark.parametrize("vector", _load("request"), ids=lambda v: v["id"])
def test_request_vector(vector: dict[str, Any]) -> None:
    spec = vector["input"]
    request = AgentRequest.model_validate_json(json.dumps(spec["request"]))
    message = request_to_message(
        request, message_id=spec["message_id"], spec_version=spec["spec_version"]
    )
    if vector["wire"] == "0.3":
        wire = conversions.to_compat_message(message).model_dump(
            mode="json", by_alias=True, exclude_none=True
        )
    else:
        wire = MessageToDict(message)
    assert wire == vector["expect"]
