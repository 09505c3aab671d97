"""Agents for the ACP door tests, loaded by ``trpc-bridge acp --agent acp_test_agents:NAME``
(the tests start it with this folder as working directory)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from trpc_bridge import AgentEvent, AgentRequest, FunctionAgent


async def _echo(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    """Says what it was asked: text, identity, session (context id), content parts."""
    parts = ",".join(
        f"{p.type}:{p.mime_type or '-'}:{len(p.data or b'') or p.url}"
        for p in request.content_parts
    )
    yield AgentEvent.final_text(
        f"text={request.text}|user={request.user_id}|context={request.context_id}|parts={parts}",
        "chatcmpl-echo",
    )


async def _explode(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    yield AgentEvent.text_delta("about to fail", "chatcmpl-x")
    raise RuntimeError("password=hunter2 leaked into an exception")


echo = FunctionAgent(name="echo", description="echoes its request", fn=_echo)
explode = FunctionAgent(name="explode", description="raises", fn=_explode)
