"""Frames for trpc-agent-python and ADK callers (codecs/dialect_overlays.py), from the
``tool`` and ``reasoning`` scenarios."""

from __future__ import annotations

from typing import Any

from a2a.types import TaskArtifactUpdateEvent
from google.protobuf.json_format import MessageToDict

from trpc_bridge.codecs.dialect_overlays import Dialect, OverlayStreamEncoder
from trpc_bridge.codecs.trpc_encode import EncodeOptions, StreamEncoder
from trpc_bridge.events import AgentRequest
from trpc_bridge.scenarios import SCRIPTS


def _artifacts(scenario: str, dialect: Dialect) -> list[dict[str, Any]]:
    inner = StreamEncoder(task_id="t", context_id="c", options=EncodeOptions())
    encoder = OverlayStreamEncoder(inner, dialect)
    frames = [f for e in SCRIPTS[scenario](AgentRequest()) for f in encoder.encode(e)]
    frames += encoder.close()
    return [MessageToDict(f) for f in frames if isinstance(f, TaskArtifactUpdateEvent)]


def _with_parts(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in frames if f["artifact"].get("parts")]


def test_trpc_python_callers_get_partial_flags_and_tool_result_ids() -> None:
    frames = _with_parts(_artifacts("tool", Dialect.TRPC_PYTHON))
    assert [f["metadata"]["partial"] for f in frames] == [False, False, True, True, True, False]
    result = frames[1]
    assert result["artifact"]["artifactId"].startswith("tool-")
    assert result["metadata"]["llm_response_id"] == result["artifact"]["artifactId"]
    assert frames[-1]["artifact"]["parts"] == [{"text": "It is 20°C in Beijing."}]


def test_adk_callers_get_genai_parts_and_closed_complete_responses() -> None:
    frames = _with_parts(_artifacts("tool", Dialect.ADK))
    call, result = frames[0], frames[1]
    assert call["artifact"]["parts"][0]["data"] == {
        "id": "call_001",
        "name": "get_weather",
        "args": {"city": "Beijing"},
    }
    assert result["artifact"]["parts"][0]["data"]["response"] == {
        "city": "Beijing",
        "temp": "20°C",
    }
    assert [f.get("lastChunk", False) for f in frames] == [True, True, False, False, False, True]
    assert {f["artifact"]["artifactId"] for f in frames[2:]} == {"chatcmpl-tool-2"}


def test_adk_reasoning_is_adk_thought() -> None:
    frames = _with_parts(_artifacts("reasoning", Dialect.ADK))
    assert frames[0]["artifact"]["parts"][0]["metadata"]["adk_thought"] is True
