"""trpc-shaped parts rewritten for Google ADK's client (codecs/dialects/adk_parts.py): the genai
shapes ADK validates, verified against google-adk 2.13.0 (interop/python)."""

from __future__ import annotations

from typing import Any

from a2a.types import Part
from google.protobuf.json_format import MessageToDict

from trpc_bridge.codecs.dialects.adk_parts import adk_part


def _data(data: dict[str, Any], kind: str) -> Part:
    part = Part()
    part.data.struct_value.update(data)
    part.metadata.update({"type": kind, "adk_type": kind})
    return part


def _dict(part: Part) -> dict[str, Any]:
    shown: dict[str, Any] = MessageToDict(part)
    return shown


def test_function_call_gets_an_argument_object_and_no_extra_keys() -> None:
    trpc = {
        "args": '{"city":"Beijing"}',
        "id": "call_001",
        "name": "get_weather",
        "type": "function",
    }
    assert _dict(adk_part(_data(trpc, "function_call"))) == {
        "data": {"id": "call_001", "name": "get_weather", "args": {"city": "Beijing"}},
        "metadata": {"adk_type": "function_call"},
    }


def test_function_response_is_an_object_or_wrapped() -> None:
    json_text = {"id": "c", "name": "n", "response": '{"temp":"20°C"}'}
    plain_text = {"id": "c", "name": "n", "response": "sunny"}
    assert _dict(adk_part(_data(json_text, "function_response")))["data"]["response"] == {
        "temp": "20°C"
    }
    assert _dict(adk_part(_data(plain_text, "function_response")))["data"]["response"] == {
        "result": "sunny"
    }


def test_code_parts_use_genai_enums() -> None:
    code = adk_part(_data({"code": "print(1)", "language": "unknown"}, "executable_code"))
    result = adk_part(_data({"outcome": "", "output": "1\n"}, "code_execution_result"))
    assert _dict(code)["data"] == {"code": "print(1)", "language": "PYTHON"}
    assert _dict(result)["data"] == {"outcome": "OUTCOME_OK", "output": "1\n"}


def test_thoughts_carry_adk_thought_and_other_parts_pass() -> None:
    thought = Part(text="hmm")
    thought.metadata.update({"thought": True})
    assert _dict(adk_part(thought))["metadata"] == {"adk_thought": True, "thought": True}
    text = Part(text="hi")
    assert adk_part(text) is text
    other = _data({"x": 1}, "something_else")
    assert adk_part(other) is other
