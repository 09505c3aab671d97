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


def _adk_ts_chunk(text: str, *, append: bool, last: bool) -> dict[str, Any]:
    """Google ADK for TypeScript's server: an artifact of its own id, appended to, then
    replaced by the whole text; the response id only in ``adk_custom_metadata``."""
    artifact = {"artifactId": "a-uuid", "parts": [{"kind": "text", "text": text}]}
    metadata = {"adk_custom_metadata": {"llm_response_id": "r1"}, "adk_partial": not last}
    return {
        "kind": "artifact-update",
        **IDS,
        "artifact": artifact,
        "append": append,
        "lastChunk": last,
        "metadata": metadata,
    }


def test_adk_typescript_pieces_and_whole_are_one_response() -> None:
    frames = [
        _adk_ts_chunk("Hel", append=True, last=False),
        _adk_ts_chunk("lo", append=True, last=False),
        _adk_ts_chunk("Hello", append=False, last=True),
    ]
    events = decode_any_stream(frames)
    assert {e.id for e in events if e.choices} == {"r1"}
    assert [m.text for m in aggregate(events) if m.text] == ["Hello"]


def test_adk_typescript_failure_is_the_failed_response() -> None:
    """Its failed status names the response only in ``adk_custom_metadata``."""
    failed = {
        "kind": "status-update",
        **IDS,
        "final": True,
        "status": {
            "state": "failed",
            "message": {
                "kind": "message",
                "messageId": "m9",
                "role": "agent",
                "parts": [{"kind": "text", "text": "boom"}],
            },
        },
        "metadata": {"adk_custom_metadata": {"llm_response_id": "r1"}, "adk_error_code": "E42"},
    }
    events = decode_any_stream([_adk_ts_chunk("Partial", append=True, last=False), failed])
    # The piece, its completion (the run is over), then the error: one response.
    assert {e.id for e in events} == {"r1"}
    assert [m.text for m in aggregate(events)] == ["Partial"]
    assert events[-1].is_terminal_error()
