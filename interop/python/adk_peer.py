"""Google ADK peer: ADK's own A2A server (``to_a2a``) and client (``RemoteA2aAgent``)
around a scripted model.

Runs in a virtualenv with ``google-adk[a2a]`` (a2a-sdk 1.x); ``make test`` builds it under
``build/peers/adk``. No network but loopback, no model: the LLM is :class:`ScriptedLlm`.

    python adk_peer.py serve [--scenario tool ...]
        serves each scenario (default: all) on its own port (see harness.py)
    python adk_peer.py client
        answers calls read from stdin (see harness.py) with ``RemoteA2aAgent`` run by a
        Runner, streaming or not as each call asks

ADK has no LLM response id of its own; the scripted model puts the script's id (the Go
peer's, e.g. ``chatcmpl-tool-2``) in ``LlmResponse.custom_metadata["llm_response_id"]``,
which ADK's A2A server forwards as ``adk_custom_metadata``. Its A2A executor runs the
agent without ``StreamingMode.SSE``; the scripted model streams its chunks anyway (as a
streaming model adapter does), so that deltas travel over A2A as they do from Go.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import Any

import httpx
from a2a.client import ClientConfig, ClientFactory
from google.adk.a2a.agent import RemoteA2aAgent
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from harness import client_loop, event_record, run_turn, serve_all, step_index
from scripts import SCRIPTS, Script, Step, get_weather

CARD_PATH = ".well-known/agent-card.json"


def _response(step: Step, *parts: types.Part, partial: bool) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=list(parts)),
        partial=partial,
        custom_metadata={"llm_response_id": step.response_id},
    )


def _responses(step: Step) -> list[LlmResponse]:
    out = [_response(step, types.Part(text=t, thought=True), partial=True) for t in step.reasoning]
    out += [_response(step, types.Part(text=t), partial=True) for t in step.chunks]
    if step.error is not None:
        code, message = step.error
        out.append(
            LlmResponse(
                error_code=code,
                error_message=message,
                custom_metadata={"llm_response_id": step.response_id},
            )
        )
        return out
    parts: list[types.Part] = []
    if step.reasoning:
        parts.append(types.Part(text="".join(step.reasoning), thought=True))
    if step.chunks:
        parts.append(types.Part(text=step.text))
    parts += [
        types.Part(function_call=types.FunctionCall(id=c.id, name=c.name, args=c.args))
        for c in step.calls
    ]
    out.append(_response(step, *parts, partial=False))
    return out


class ScriptedLlm(BaseLlm):
    """A deterministic model that replays one scenario script."""

    script: Script

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        index = min(step_index(llm_request.contents), len(self.script.steps) - 1)
        for response in _responses(self.script.steps[index]):
            yield response


def _agent(scenario: str) -> LlmAgent:
    script = SCRIPTS[scenario]
    tools = [get_weather] if "get_weather" in script.tools else []
    return LlmAgent(
        name="weather_agent",
        description="Google ADK interop scenario agent",
        model=ScriptedLlm(model="scripted-model", script=script),
        tools=tools,
    )


async def _app(scenario: str, url: str) -> Any:
    port = int(url.rsplit(":", 1)[1].strip("/"))
    return to_a2a(_agent(scenario), host="127.0.0.1", port=port)


def _record(event: Any) -> dict[str, Any]:
    return event_record(event, "id", event.id)


async def call(url: str, message: str, user: str, session: str, stream: bool) -> dict[str, Any]:
    """One run of ``RemoteA2aAgent`` (card at ``URL/.well-known/agent-card.json``)."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0)) as http:
        factory = ClientFactory(ClientConfig(httpx_client=http, streaming=stream))
        remote = RemoteA2aAgent(
            name="remote", agent_card=url.rstrip("/") + "/" + CARD_PATH, a2a_client_factory=factory
        )
        sessions = InMemorySessionService()
        runner = Runner(app_name="adk-peer-client", agent=remote, session_service=sessions)
        await sessions.create_session(app_name="adk-peer-client", user_id=user, session_id=session)
        return await run_turn(
            runner,
            sessions,
            app_name="adk-peer-client",
            user=user,
            session=session,
            new_message=types.Content(role="user", parts=[types.Part(text=message)]),
            record=_record,
        )


def main() -> None:
    parser = argparse.ArgumentParser(prog="adk_peer")
    sub = parser.add_subparsers(dest="command", required=True)
    p_serve = sub.add_parser("serve")
    p_serve.add_argument("--scenario", action="append", choices=sorted(SCRIPTS))
    sub.add_parser("client")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.command == "serve":
        asyncio.run(serve_all(args.scenario or sorted(SCRIPTS), _app))
    else:
        asyncio.run(client_loop(call))


if __name__ == "__main__":
    main()
