"""A deterministic demo agent (no network, no model): what ``trpc-bridge serve`` runs.

It produces the event shapes a trpc-agent-go LLM agent produces, so every part of the
trpc dialect shows up on the wire:

- default prompt: reasoning deltas, a ``get_weather`` tool call with the complete
  reasoning (as a model's final response carries it; a real local function;
  the city comes from "weather in <City>", default Beijing), the tool result, then the
  answer streamed as text deltas under a second response id, then the full final text;
- a prompt containing ``code``: ``executable_code`` + ``code_execution_result`` (a fixed
  arithmetic expression evaluated without ``eval``);
- a prompt containing ``fail``: some text, then a structured error.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import AsyncIterator, Callable

from trpc_bridge.agent import FunctionAgent, Skill
from trpc_bridge.events import AgentEvent, AgentRequest, ErrorType
from trpc_bridge.names import new_response_id

_CITY = re.compile(r"weather\s+in\s+([A-Za-z][A-Za-z .'-]*[A-Za-z])", re.IGNORECASE)
_TEMPERATURES = {"beijing": 20, "shanghai": 24, "shenzhen": 28, "paris": 14, "london": 11}
_EXPRESSION = "6 * 7"
_OPERATORS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
}


def get_weather(city: str) -> dict[str, object]:
    """The demo tool: a fixed temperature per city (unknown cities get 18)."""
    return {"city": city, "temp": _TEMPERATURES.get(city.lower(), 18)}


def city_of(prompt: str) -> str:
    match = _CITY.search(prompt)
    return match.group(1).strip().title() if match else "Beijing"


def evaluate(expression: str) -> int:
    """Integer + - * only; anything else is refused (nothing is executed)."""

    def walk(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        raise ValueError(f"unsupported expression: {expression!r}")

    return walk(ast.parse(expression, mode="eval").body)


def _words(text: str) -> list[str]:
    return re.findall(r"\S+\s*", text)


async def _weather(prompt: str) -> AsyncIterator[AgentEvent]:
    city = city_of(prompt)
    thinking = new_response_id()
    reasoning = f"The user asks about the weather in {city}; I should call get_weather."
    for piece in _words(reasoning):
        yield AgentEvent.reasoning_delta(piece, thinking)
    # As a model's final response: the complete reasoning with the call (a unary caller
    # gets only complete responses).
    yield AgentEvent.tool_call(
        "get_weather", {"city": city}, call_id="call_001", response_id=thinking, reasoning=reasoning
    )
    result = get_weather(city)
    yield AgentEvent.tool_result("call_001", "get_weather", json.dumps(result))
    answer_id = new_response_id()
    answer = f"It is {result['temp']}°C in {city}."
    for piece in _words(answer):
        yield AgentEvent.text_delta(piece, answer_id)
    yield AgentEvent.final_text(answer, answer_id)


async def _code() -> AsyncIterator[AgentEvent]:
    response_id = new_response_id()
    text = f"Let me compute it.\n```python\nprint({_EXPRESSION})\n```"
    yield AgentEvent.final_text(text, response_id, done=False)
    yield AgentEvent.code(text)
    yield AgentEvent.code_result(f"{evaluate(_EXPRESSION)}\n")
    answer_id = new_response_id()
    yield AgentEvent.final_text(f"The result is {evaluate(_EXPRESSION)}.", answer_id)


async def _fail() -> AsyncIterator[AgentEvent]:
    response_id = new_response_id()
    yield AgentEvent.text_delta("Working on it", response_id)
    yield AgentEvent.failure(
        "the demo agent was asked to fail",
        type=ErrorType.API,
        code="DEMO_FAILURE",
        response_id=response_id,
    )


async def run_demo(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    prompt = request.text.lower()
    if "fail" in prompt:
        events = _fail()
    elif "code" in prompt:
        events = _code()
    else:
        events = _weather(request.text)
    async for event in events:
        yield event


def demo_agent() -> FunctionAgent:
    return FunctionAgent(
        name="weather-agent",
        description="Deterministic demo agent: weather tool, code execution, failures.",
        fn=run_demo,
        skills=(Skill("get_weather", "Current temperature of a city.", ("tool",)),),
    )
