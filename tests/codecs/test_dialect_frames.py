"""Frames of other dialects rewritten before trpc's decoder (codecs/dialects/frames.py):
the cases the recorded vectors do not hold."""

from __future__ import annotations

from typing import Any

from trpc_bridge.codecs.dialects.decode import decode_any_result, decode_any_stream
from trpc_bridge.message_aggregate import aggregate

IDS = {"taskId": "t1", "contextId": "c1"}


def _chunk(text: str) -> dict[str, Any]:
    artifact = {"artifactId": "r1", "parts": [{"kind": "text", "text": text}]}
    metadata = {"object_type": "chat.completion.chunk", "llm_response_id": "r1", "partial": "True"}
    return {"kind": "artifact-update", **IDS, "artifact": artifact, "metadata": metadata}


def _error_message() -> dict[str, Any]:
    """How trpc-agent-python reports a failed run: an agent message, then the stream ends."""
    return {
        "kind": "message",
        "messageId": "m1",
        "role": "agent",
        "parts": [{"kind": "text", "text": "boom"}],
        "metadata": {"error_code": "E42"},
    }


def test_trpc_python_error_message_is_the_run_failure() -> None:
    events = decode_any_stream([_chunk("Partial"), _error_message()])
    assert [m.text for m in aggregate(events) if m.text] == ["Partial"]
    assert events[-1].is_terminal_error() and events[-1].error is not None
    assert events[-1].error.message == "boom" and events[-1].error.code == "E42"
    [unary] = decode_any_result(_error_message())
    assert unary.is_terminal_error()


def test_the_caller_echoed_in_a_status_is_not_output() -> None:
    echo = {
        "kind": "message",
        "messageId": "u1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
    }
    submitted = {"kind": "status-update", **IDS, "status": {"state": "submitted", "message": echo}}
    events = decode_any_stream([submitted, _chunk("Hello")])
    assert [m.text for m in aggregate(events) if m.text] == ["Hello"]
