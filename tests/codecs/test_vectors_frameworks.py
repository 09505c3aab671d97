"""Golden vectors recorded from the Python agent frameworks' own A2A servers (families
``TP`` trpc-agent-python 0.3, ``TV`` trpc-agent-python a2a-v1, ``AD`` Google ADK; written
by ``tests/interop/record_framework_vectors.py``): the decoded stream or unary result must
fold into the scenario's messages, one per response under the script's response id, each
text once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from vector_files import VECTORS

from trpc_bridge.codecs.dialects.decode import decode_any_result, decode_any_stream
from trpc_bridge.codecs.trpc.decode import decode_result, decode_stream
from trpc_bridge.message_aggregate import AggregatedMessage, aggregate

RECORDED = [
    v
    for v in (json.loads(p.read_text()) for p in sorted(VECTORS.glob("*.json")))
    if v.get("direction") == "decode-recorded"
]


def _json(value: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _message(message: AggregatedMessage, with_id: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"id": message.id} if with_id else {}
    if message.text:
        out["text"] = message.text
    if message.reasoning:
        out["reasoning"] = message.reasoning
    if message.tool_calls:
        out["tool_calls"] = [
            [c.function.name, _json(c.function.arguments)] for c in message.tool_calls
        ]
    if message.tool_results:
        out["tool_results"] = [[r.name, _json(r.content)] for r in message.tool_results]
    return out


@pytest.mark.parametrize("vector", RECORDED, ids=lambda v: v["id"])
def test_recorded_vector_folds_into_the_scenario(vector: dict[str, Any]) -> None:
    if vector["mode"] == "stream":
        events = decode_any_stream(vector["input"])
    else:
        events = decode_any_result(vector["input"])
    messages = [
        m for m in aggregate(events) if m.text or m.reasoning or m.tool_calls or m.tool_results
    ]
    expected = vector["expect_messages"]
    assert len(messages) == len(expected), [_message(m, True) for m in messages]
    for message, want in zip(messages, expected, strict=True):
        assert _message(message, "id" in want) == want


TRPC_VECTORS = [
    v
    for v in (json.loads(p.read_text()) for p in sorted(VECTORS.glob("*.json")))
    if v.get("direction") == "decode"
]


def _plain_status_text(frame: Any) -> bool:
    """A working status message with text and no trpc metadata: plain A2A, a message of
    its own for the dialect reader, a delta for trpc's (the same text either way)."""
    status = frame.get("status", {}) if isinstance(frame, dict) else {}
    message = status.get("message") or {}
    return bool(message.get("parts")) and "object_type" not in message.get("metadata", {})


def _shown(events: list[Any]) -> list[tuple[str, str, str]]:
    return [(m.id, m.text, m.reasoning) for m in aggregate(events)]


@pytest.mark.parametrize("vector", TRPC_VECTORS, ids=lambda v: v["id"])
def test_trpc_frames_decode_as_before(vector: dict[str, Any]) -> None:
    """The dialect rewrites leave trpc's own frames alone (Go callers, Go vectors)."""
    if vector["mode"] == "unary":
        before, after = decode_result(vector["input"]), decode_any_result(vector["input"])
    else:
        before, after = decode_stream(vector["input"]), decode_any_stream(vector["input"])
    if vector["mode"] == "stream" and any(_plain_status_text(f) for f in vector["input"]):
        assert _shown(after) == _shown(before)
        return
    assert [e.model_dump(exclude={"event_id", "timestamp"}) for e in after] == [
        e.model_dump(exclude={"event_id", "timestamp"}) for e in before
    ]


def test_every_framework_family_is_recorded() -> None:
    assert {v["id"][:2] for v in RECORDED} == {"TP", "TV", "AD"}
