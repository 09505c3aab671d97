"""The ``trpc-python`` and ``adk`` encodings (codecs/dialects/encodings.py), from the
``tool`` and ``reasoning`` scenarios, and how ``auto`` picks them."""

from __future__ import annotations

import json
from typing import Any

from a2a.types import Task, TaskArtifactUpdateEvent
from google.protobuf.json_format import MessageToDict
from vector_files import VECTORS

from trpc_bridge.agents.scenarios import SCRIPTS
from trpc_bridge.codecs.dialects.encodings import ADK, TRPC_PYTHON, DialectEncoding
from trpc_bridge.codecs.encoding import EncodingRequest, RunTarget, select_encoding
from trpc_bridge.events import AgentRequest


def _artifacts(scenario: str, encoding: DialectEncoding) -> list[dict[str, Any]]:
    encoder = encoding.stream(RunTarget(task_id="t", context_id="c"))
    frames = [f for e in SCRIPTS[scenario](AgentRequest()) for f in encoder.encode(e)]
    frames += encoder.close()
    artifacts = [MessageToDict(f) for f in frames if isinstance(f, TaskArtifactUpdateEvent)]
    return [a for a in artifacts if a["artifact"].get("parts")]


def test_trpc_python_callers_get_partial_flags_and_tool_result_ids() -> None:
    frames = _artifacts("tool", TRPC_PYTHON)
    assert [f["metadata"]["partial"] for f in frames] == [False, False, True, True, True, False]
    result = frames[1]
    assert result["artifact"]["artifactId"].startswith("tool-")
    assert result["metadata"]["llm_response_id"] == result["artifact"]["artifactId"]
    assert frames[-1]["artifact"]["parts"] == [{"text": "It is 20°C in Beijing."}]


def test_adk_callers_get_genai_parts_and_closed_complete_responses() -> None:
    frames = _artifacts("tool", ADK)
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
    frames = _artifacts("reasoning", ADK)
    assert frames[0]["artifact"]["parts"][0]["metadata"]["adk_thought"] is True


def test_adk_unary_answer_is_all_artifacts() -> None:
    encoder = ADK.unary(RunTarget(task_id="t", context_id="c"))
    for event in SCRIPTS["tool"](AgentRequest()):
        encoder.add(event)
    task = encoder.result(context_id="c", task_id="t")
    assert isinstance(task, Task) and not task.history
    kinds = [
        p.metadata["adk_type"] if p.HasField("data") else "text"
        for a in task.artifacts
        for p in a.parts
    ]
    assert kinds == ["function_call", "function_response", "text"]


def test_auto_picks_each_framework_from_its_captured_request() -> None:
    for number, expected in (("N01", "trpc"), ("N02", "trpc-python"), ("N04", "adk")):
        vector = json.loads((VECTORS / f"{number}.json").read_text())
        message = vector["message"]
        request = EncodingRequest(
            spec_version=message.get("metadata", {}).get("interaction_spec_version"),
            metadata=message.get("metadata", {}),
            part_metadata=tuple(p.get("metadata", {}) for p in message["parts"]),
        )
        assert select_encoding("auto", request).name == expected
