"""The scenario scripts of the Python framework peers, as plain data.

They mirror the Go peer's scripts (``interop/go/README.md`` § Scenarios and
``bridge/scenarios.py``): the same response ids, chunks, tool calls and tool results, so
one expectation serves every peer. Each framework's peer turns a :class:`Step` into its
own model responses (``trpc_peer.py``, ``adk_peer.py``); nothing here imports a framework.

The peers of other languages (``interop/js``, ``interop/java``, ``interop/adk-js``) read the
same scripts as JSON: ``python scripts.py`` prints them, each call with the result the
scenarios' tool gives (:func:`as_json`); the tests hand that text to a peer in its
``PEER_SCRIPTS`` environment variable.

The scripted model picks its step from the request: the number of model turns after the
last user *text* turn (0 for the first call, 1 after a tool round), as the Go peer does.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class Step:
    """One model call: streamed reasoning and text chunks, then the final response (the
    joined chunks, or tool calls), or an error after the chunks."""

    response_id: str
    chunks: tuple[str, ...] = ()
    reasoning: tuple[str, ...] = ()
    calls: tuple[Call, ...] = ()
    error: tuple[str, str] | None = None  # (code, message)

    @property
    def text(self) -> str:
        return "".join(self.chunks)


@dataclass(frozen=True)
class Script:
    steps: tuple[Step, ...]
    tools: tuple[str, ...] = field(default=())
    code: bool = False


_TEMPS = {"Beijing": "20°C", "Shanghai": "25°C"}


def get_weather(city: str) -> dict[str, str]:
    """The scenarios' one tool, as the Go peer's: ``{"city": …, "temp": …}``."""
    return {"city": city, "temp": _TEMPS.get(city, "18°C")}


SCRIPTS: dict[str, Script] = {
    "text": Script((Step("chatcmpl-text-1", ("Hello", " from", " trpc", ".")),)),
    "reasoning": Script(
        (
            Step(
                "chatcmpl-reason-1",
                ("The answer", " is 42."),
                reasoning=("Let me think", " about it."),
            ),
        )
    ),
    "tool": Script(
        (
            Step("chatcmpl-tool-1", calls=(Call("call_001", "get_weather", {"city": "Beijing"}),)),
            Step("chatcmpl-tool-2", ("It is", " 20°C", " in Beijing.")),
        ),
        tools=("get_weather",),
    ),
    "parallel_tools": Script(
        (
            Step(
                "chatcmpl-ptool-1",
                calls=(
                    Call("call_001", "get_weather", {"city": "Beijing"}),
                    Call("call_002", "get_weather", {"city": "Shanghai"}),
                ),
            ),
            Step("chatcmpl-ptool-2", ("Beijing is 20°C", " and Shanghai is 25°C.")),
        ),
        tools=("get_weather",),
    ),
    "error": Script((Step("chatcmpl-error-1", ("Partial",), error=("E42", "boom")),)),
    "long": Script((Step("chatcmpl-long-1", tuple(f"t{i} " for i in range(1000))),)),
    "unicode": Script((Step("chatcmpl-unicode-1", ("a<b>&c", " 😀", " 你好")),)),
}


def as_json() -> str:
    """Every script as JSON, each call with ``result``: what :func:`get_weather` returns."""
    scripts = {}
    for name, script in SCRIPTS.items():
        steps = []
        for step in script.steps:
            data = asdict(step)
            data["calls"] = [
                {**asdict(call), "result": get_weather(**call.args)} for call in step.calls
            ]
            steps.append(data)
        scripts[name] = {"steps": steps, "tools": list(script.tools), "code": script.code}
    return json.dumps(scripts, ensure_ascii=False)


if __name__ == "__main__":
    print(as_json())
