"""trpc-shaped A2A parts → the shapes Google ADK's client accepts.

ADK's ``RemoteA2aAgent`` validates an ``adk_type`` DataPart as the genai model it names
(``FunctionCall``, ``FunctionResponse``, ``ExecutableCode``, ``CodeExecutionResult``):
unknown keys are rejected and ``args`` / ``response`` must be objects, so trpc's shapes
(``args`` / ``response`` as JSON strings, an extra ``"type": "function"``) become empty
events. It reads reasoning from ``adk_thought``. This module rewrites one part at a time;
text and file parts, and DataParts of other types, pass unchanged.

Verified with google-adk 2.13.0's client (interop/python/adk_peer.py): ``FunctionCall``
= ``{id, name, args}``, ``FunctionResponse`` = ``{id, name, response}``,
``ExecutableCode`` = ``{code, language}``, ``CodeExecutionResult`` = ``{outcome, output}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from a2a.types import Part
from google.protobuf.json_format import MessageToDict

from trpc_bridge.codecs.trpc.keys import (
    ADK_PREFIX,
    CODE_EXECUTION_RESULT,
    EXECUTABLE_CODE,
    FUNCTION_CALL,
    FUNCTION_RESPONSE,
    PART_THOUGHT,
    PART_TYPE,
)

ADK_TYPE = ADK_PREFIX + PART_TYPE
ADK_THOUGHT = ADK_PREFIX + PART_THOUGHT
#: genai's language and outcome enums (trpc writes "unknown" and "").
_LANGUAGE = "PYTHON"
_OUTCOMES = {"": "OUTCOME_OK", "OK": "OUTCOME_OK"}


def _object(value: Any, wrap: str) -> dict[str, Any]:
    """A JSON object: objects as they are, JSON text parsed, anything else wrapped."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {wrap: value}
    if isinstance(value, Mapping):
        return dict(value)
    return {wrap: value}


def _genai(kind: str, data: Mapping[str, Any]) -> dict[str, Any] | None:
    """``data`` in the genai shape of ``kind``, or None for kinds ADK does not check."""
    if kind == FUNCTION_CALL:
        return {
            "id": data.get("id", ""),
            "name": data.get("name", ""),
            "args": _object(data.get("args", {}), "value"),
        }
    if kind == FUNCTION_RESPONSE:
        # ADK wraps a tool result that is not an object as {"result": …}.
        return {
            "id": data.get("id", ""),
            "name": data.get("name", ""),
            "response": _object(data.get("response", {}), "result"),
        }
    if kind == EXECUTABLE_CODE:
        return {"code": data.get("code", ""), "language": _LANGUAGE}
    if kind == CODE_EXECUTION_RESULT:
        outcome = str(data.get("outcome", ""))
        return {"outcome": _OUTCOMES.get(outcome, outcome), "output": data.get("output", "")}
    return None


def adk_part(part: Part) -> Part:
    """``part`` as ADK's client reads it (a new Part; ``part`` is not changed)."""
    metadata = MessageToDict(part.metadata) if part.HasField("metadata") else {}
    if part.HasField("text"):
        if metadata.get(PART_THOUGHT) is True or metadata.get(ADK_THOUGHT) is True:
            out = Part(text=part.text)
            out.metadata.update({ADK_THOUGHT: True, PART_THOUGHT: True})
            return out
        return part
    if not part.HasField("data"):
        return part
    kind = metadata.get(ADK_TYPE) or metadata.get(PART_TYPE)
    data = MessageToDict(part.data)
    shaped = _genai(str(kind), data) if isinstance(data, dict) else None
    if shaped is None:
        return part
    out = Part()
    out.data.struct_value.update(shaped)
    out.metadata.update({ADK_TYPE: kind})
    return out


__all__ = ["adk_part"]
