"""Scripted agents that replay, event for event, what trpc-agent-go's runner yields for the
interop scenarios of the Go peer (``interop/go``, observed sequences in its SCENARIOS.md).

Serving one of these with the bridge must put the same frames on the wire as the Go peer's
``gopeer serve --scenario NAME``: that is the differential test of ``tests/interop``.
Serve one with ``trpc-bridge serve --agent trpc_bridge.agents.scenarios:tool`` (any name below).

The runner's per-step start event and ``runner.completion`` are left out: trpc-agent-go's
server never puts them on the wire. The four ``preprocessing.*`` events are kept because
it does (as metadata-only artifacts).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from trpc_bridge.agent import Skill
from trpc_bridge.codecs.trpc.keys import go_json
from trpc_bridge.events import AgentEvent, AgentRequest, FunctionCall, ToolCall
from trpc_bridge.names import new_uuid

_PREPROCESSING = ("basic", "instruction", "identity", "content")


def _llm_step(*, code_instruction: bool = False) -> list[AgentEvent]:
    """The events trpc's llmagent emits before every model call."""
    names = list(_PREPROCESSING)
    if code_instruction:  # the code executor adds its own instruction event
        names.insert(3, "instruction")
    return [AgentEvent(object=f"preprocessing.{name}") for name in names]


def _streamed(
    response_id: str, pieces: Sequence[str], *, reasoning: Sequence[str] = ()
) -> list[AgentEvent]:
    """Chunks then the final full response, as trpc's streaming model emits them."""
    events = [AgentEvent.reasoning_delta(p, response_id) for p in reasoning]
    events += [AgentEvent.text_delta(p, response_id) for p in pieces]
    events.append(AgentEvent.final_text("".join(pieces), response_id, reasoning="".join(reasoning)))
    return events


def _weather(city: str) -> str:
    temps = {"Beijing": "20°C", "Shanghai": "25°C"}
    return go_json({"city": city, "temp": temps.get(city, "18°C")})


def _call(call_id: str, name: str, args: dict[str, object]) -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=go_json(args)))


def _text(_: AgentRequest) -> list[AgentEvent]:
    return _llm_step() + _streamed("chatcmpl-text-1", ["Hello", " from", " trpc", "."])


def _reasoning(_: AgentRequest) -> list[AgentEvent]:
    return _llm_step() + _streamed(
        "chatcmpl-reason-1", ["The answer", " is 42."], reasoning=["Let me think", " about it."]
    )


def _tool(_: AgentRequest) -> list[AgentEvent]:
    call = _call("call_001", "get_weather", {"city": "Beijing"})
    return [
        *_llm_step(),
        AgentEvent.tool_calls([call], "chatcmpl-tool-1"),
        AgentEvent.tool_result("call_001", "get_weather", _weather("Beijing")),
        *_llm_step(),
        *_streamed("chatcmpl-tool-2", ["It is", " 20°C", " in Beijing."]),
    ]


def _parallel_tools(_: AgentRequest) -> list[AgentEvent]:
    calls = [
        _call("call_001", "get_weather", {"city": "Beijing"}),
        _call("call_002", "get_weather", {"city": "Shanghai"}),
    ]
    # trpc merges parallel results into one event (one choice per result) with a fresh id.
    merged = AgentEvent.tool_result("call_001", "get_weather", _weather("Beijing"))
    second = AgentEvent.tool_result("call_002", "get_weather", _weather("Shanghai")).choices[0]
    second.index = 1
    merged.choices.append(second)
    merged.id = new_uuid()
    return [
        *_llm_step(),
        AgentEvent.tool_calls(calls, "chatcmpl-ptool-1"),
        merged,
        *_llm_step(),
        *_streamed("chatcmpl-ptool-2", ["Beijing is 20°C", " and Shanghai is 25°C."]),
    ]


def _code(_: AgentRequest) -> list[AgentEvent]:
    pieces = ["```python\n", "print(6 * 7)\n", "```"]
    return [
        *_llm_step(code_instruction=True),
        *_streamed("chatcmpl-code-1", pieces),
        AgentEvent.code("".join(pieces)),
        AgentEvent.code_result("Code execution result:\n42\n\n"),
    ]


def _error(_: AgentRequest) -> list[AgentEvent]:
    return [
        *_llm_step(),
        AgentEvent.text_delta("Partial", "chatcmpl-error-1"),
        AgentEvent.failure("boom", type="api_error", code="E42", response_id="chatcmpl-error-1"),
    ]


def _state_delta(_: AgentRequest) -> list[AgentEvent]:
    result = AgentEvent.tool_result("call_001", "set_counter", go_json({"ok": True}))
    result.state_delta = {"counter": b"1", "gone": None}
    return [
        *_llm_step(),
        AgentEvent.tool_calls([_call("call_001", "set_counter", {"value": 1})], "chatcmpl-state-1"),
        result,
        *_llm_step(),
        *_streamed("chatcmpl-state-2", ["Counter", " set."]),
    ]


def _whoami(request: AgentRequest) -> list[AgentEvent]:
    """Echoes the caller identity the bridge resolved (``X-User-ID``)."""
    return _streamed("chatcmpl-whoami-1", [f"user={request.user_id}"])


def _long(_: AgentRequest) -> list[AgentEvent]:
    return _llm_step() + _streamed("chatcmpl-long-1", [f"t{i} " for i in range(1000)])


def _long_of(count: int) -> Callable[[AgentRequest], Iterator[AgentEvent]]:
    """``long`` with ``count`` chunks, made one at a time as the Go peer's scripted model
    sends them (an agent does not hold a whole answer's deltas at once)."""

    def script(_: AgentRequest) -> Iterator[AgentEvent]:
        yield from _llm_step()
        for i in range(count):
            yield AgentEvent.text_delta(f"t{i} ", "chatcmpl-long-1")
        yield AgentEvent.final_text("".join(f"t{i} " for i in range(count)), "chatcmpl-long-1")

    return script


def _unicode(_: AgentRequest) -> list[AgentEvent]:
    return _llm_step() + _streamed("chatcmpl-unicode-1", ["a<b>&c", " 😀", " 你好"])


@dataclass
class ScenarioAgent:
    """An :class:`~trpc_bridge.agent.Agent` that replays one scenario's events.

    ``delay`` seconds are slept before every event (cancellation tests need a slow stream).
    """

    scenario: str
    script: Callable[[AgentRequest], Iterable[AgentEvent]]
    name: str = "weather-agent"
    description: str = "trpc-a2a-bridge interop scenario agent"
    delay: float = 0.0
    skills: Sequence[Skill] = field(default_factory=tuple)

    async def run(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        sent, finished = 0, False
        try:
            for event in self.script(request):
                if self.delay:
                    await asyncio.sleep(self.delay)
                event.author = self.name
                event.invocation_id = request.invocation_id
                yield event
                sent += 1
            finished = True
        finally:
            # The interop tests read this line to see that a cancel reached the agent,
            # as they read the Go peer's `run_end` line.
            line = {"log": "run_end", "scenario": self.scenario, "events": sent}
            print(json.dumps({**line, "canceled": not finished}), file=sys.stderr, flush=True)


SCRIPTS: dict[str, Callable[[AgentRequest], list[AgentEvent]]] = {
    "text": _text,
    "reasoning": _reasoning,
    "tool": _tool,
    "parallel_tools": _parallel_tools,
    "code": _code,
    "error": _error,
    "state_delta": _state_delta,
    "long": _long,
    "unicode": _unicode,
}

text = ScenarioAgent("text", _text)
reasoning = ScenarioAgent("reasoning", _reasoning)
tool = ScenarioAgent("tool", _tool)
parallel_tools = ScenarioAgent("parallel_tools", _parallel_tools)
code = ScenarioAgent("code", _code)
error = ScenarioAgent("error", _error)
state_delta = ScenarioAgent("state_delta", _state_delta)
long = ScenarioAgent("long", _long)
unicode = ScenarioAgent("unicode", _unicode)
whoami = ScenarioAgent("whoami", _whoami)
#: The Go peer's ``long10k`` (10,000 chunks): for ``bench/vs_go.py``, not in the matrix.
long10k = ScenarioAgent("long10k", _long_of(10_000))
#: 100,000 chunks: ``bench/memory.py`` (is the server's peak memory flat in stream length?).
long100k = ScenarioAgent("long100k", _long_of(100_000))
#: ``long`` at the Go peer's default pace (5 ms per chunk): slow enough to cancel midway.
long_slow = ScenarioAgent("long", _long, delay=0.005)
