"""trpc-agent-python peer: its own A2A server and client around a scripted model.

Runs in a virtualenv with ``trpc-agent-py[a2a]`` (a2a-sdk 0.3, the default) or
``trpc-agent-py[a2a-v1]`` (a2a-sdk 1.x, ``--v1``); ``make test`` builds both under
``build/peers/``. No network but loopback, no model: the LLM is :class:`ScriptedModel`.

    python trpc_peer.py serve [--scenario tool ...] [--v1]
        serves each scenario (default: all) on its own port (see harness.py)
    python trpc_peer.py client [--v1]
        answers calls read from stdin (see harness.py) with ``TrpcRemoteA2aAgent`` run by
        a Runner (always streaming: it has no unary mode); each answer holds the events
        and the events the caller's session service kept (the caller's history)
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncGenerator
from typing import Any

from harness import client_loop, event_record, run_turn, serve_all, step_index
from scripts import SCRIPTS, Script, Step, get_weather
from trpc_agent_sdk.agents import LlmAgent
from trpc_agent_sdk.models import LLMModel, LlmRequest, LlmResponse
from trpc_agent_sdk.runners import Runner
from trpc_agent_sdk.sessions import InMemorySessionService
from trpc_agent_sdk.tools import FunctionTool
from trpc_agent_sdk.types import Content, FunctionCall, Part

# The two extras are two installs of the same package: pick the adapter of this one.
V1 = "--v1" in sys.argv
if V1:
    from trpc_agent_sdk.server.a2a_v1 import (
        TrpcA2aAgentService,
        TrpcRemoteA2aAgent,
        create_a2a_application,
    )
else:
    from a2a.server.apps import A2AStarletteApplication
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.tasks import InMemoryTaskStore
    from trpc_agent_sdk.server.a2a import TrpcA2aAgentService, TrpcRemoteA2aAgent


def _content(*parts: Part) -> Content:
    return Content(role="model", parts=list(parts))


def _thought(text: str) -> Part:
    part = Part(text=text)
    part.thought = True
    return part


def _responses(step: Step, stream: bool) -> list[LlmResponse]:
    out: list[LlmResponse] = []
    if stream:
        out += [
            LlmResponse(content=_content(_thought(t)), partial=True, response_id=step.response_id)
            for t in step.reasoning
        ]
        out += [
            LlmResponse(content=_content(Part(text=t)), partial=True, response_id=step.response_id)
            for t in step.chunks
        ]
    if step.error is not None:
        code, message = step.error
        out.append(
            LlmResponse(error_code=code, error_message=message, response_id=step.response_id)
        )
        return out
    parts: list[Part] = []
    if step.reasoning:
        parts.append(_thought("".join(step.reasoning)))
    if step.chunks:
        parts.append(Part(text=step.text))
    parts += [
        Part(function_call=FunctionCall(id=c.id, name=c.name, args=c.args)) for c in step.calls
    ]
    out.append(LlmResponse(content=_content(*parts), partial=False, response_id=step.response_id))
    return out


class ScriptedModel(LLMModel):
    """A deterministic model that replays one scenario script."""

    def __init__(self, script: Script) -> None:
        super().__init__(model_name="scripted-model")
        self._script = script

    @classmethod
    def supported_models(cls) -> list[str]:
        return [r"scripted-model"]

    async def _generate_async_impl(
        self, request: LlmRequest, stream: bool = False, ctx: Any = None
    ) -> AsyncGenerator[LlmResponse, None]:
        index = min(step_index(request.contents), len(self._script.steps) - 1)
        for response in _responses(self._script.steps[index], stream):
            yield response

    def validate_request(self, request: LlmRequest) -> None:
        return None


def _agent(scenario: str) -> LlmAgent:
    script = SCRIPTS[scenario]
    tools = [FunctionTool(get_weather)] if "get_weather" in script.tools else []
    return LlmAgent(
        name="weather_agent",
        description="trpc-agent-python interop scenario agent",
        model=ScriptedModel(script),
        tools=tools,
        parallel_tool_calls=True,
    )


async def _app(scenario: str, url: str) -> Any:
    agent = _agent(scenario)
    if V1:
        service = TrpcA2aAgentService(service_name="weather_agent", agent=agent, rpc_url=url)
        await service._initialize()
        return create_a2a_application(service, enable_v0_3_compat=True)
    from trpc_agent_sdk.server.a2a import AgentCardBuilder

    card = await AgentCardBuilder(agent=agent, rpc_url=url).build()
    service = TrpcA2aAgentService(service_name="weather_agent", agent=agent, agent_card=card)
    await service._initialize()
    handler = DefaultRequestHandler(agent_executor=service, task_store=InMemoryTaskStore())
    return A2AStarletteApplication(agent_card=card, http_handler=handler).build()


def _record(event: Any) -> dict[str, Any]:
    record = event_record(event, "response_id", event.response_id or "")
    record["object"] = event.object or ""
    return record


async def call(url: str, message: str, user: str, session: str, stream: bool) -> dict[str, Any]:
    """One run of ``TrpcRemoteA2aAgent`` (streaming only: ``stream`` is ignored)."""
    remote = TrpcRemoteA2aAgent(name="remote", agent_base_url=url)
    if not await remote.initialize():
        raise RuntimeError(f"cannot initialise TrpcRemoteA2aAgent for {url}")
    sessions = InMemorySessionService()
    runner = Runner(app_name="trpc-peer-client", agent=remote, session_service=sessions)
    return await run_turn(
        runner,
        sessions,
        app_name="trpc-peer-client",
        user=user,
        session=session,
        new_message=Content(role="user", parts=[Part(text=message)]),
        record=_record,
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="trpc_peer")
    sub = parser.add_subparsers(dest="command", required=True)
    p_serve = sub.add_parser("serve")
    p_serve.add_argument("--scenario", action="append", choices=sorted(SCRIPTS))
    p_serve.add_argument("--v1", action="store_true")
    p_client = sub.add_parser("client")
    p_client.add_argument("--v1", action="store_true")
    args = parser.parse_args()
    if args.command == "serve":
        asyncio.run(serve_all(args.scenario or sorted(SCRIPTS), _app))
    else:
        asyncio.run(client_loop(call))


if __name__ == "__main__":
    main()
