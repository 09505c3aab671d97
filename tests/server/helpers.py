"""Shared pieces of the server tests: test agents, SDK clients per transport, SSE reading."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.client import Client, ClientCallContext
from a2a.types import AgentCard, AgentInterface, Message, Part, Role, SendMessageRequest

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.codecs.trpc.keys import INTERACTION_SPEC_VERSION, META_SPEC_VERSION
from trpc_bridge.events import AgentEvent, AgentRequest

#: transport name → (protocol binding, protocol version) picked from the card.
TRANSPORTS = {
    "jsonrpc-1.0": ("JSONRPC", "1.0"),
    "jsonrpc-0.3": ("JSONRPC", "0.3"),
    "rest-1.0": ("HTTP+JSON", "1.0"),
    "grpc-1.0": ("GRPC", "1.0"),
    "grpc-0.3": ("GRPC", "0.3"),
}


def card_for(card: AgentCard, transport: str) -> AgentCard:
    """``card`` reduced to the one interface of ``transport``, so the SDK must use it."""
    binding, version = TRANSPORTS[transport]
    only = AgentCard()
    only.CopyFrom(card)
    kept = [
        AgentInterface.FromString(i.SerializeToString())
        for i in card.supported_interfaces
        if i.protocol_binding == binding and i.protocol_version == version
    ]
    assert kept, transport
    del only.supported_interfaces[:]
    only.supported_interfaces.extend(kept)
    return only


async def sdk_client(card: AgentCard, transport: str, *, streaming: bool) -> Client:
    binding, _ = TRANSPORTS[transport]
    config = ClientConfig(
        streaming=streaming,
        supported_protocol_bindings=[binding],
        grpc_channel_factory=grpc.aio.insecure_channel,
        httpx_client=httpx.AsyncClient(timeout=None),
    )
    return ClientFactory(config).create(card_for(card, transport))


def user_message(text: str, *, context_id: str = "ctx-1", trpc: bool = True) -> Message:
    message = Message(
        message_id=f"msg-{uuid.uuid4()}",
        context_id=context_id,
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
    )
    if trpc:
        message.metadata.update({META_SPEC_VERSION: INTERACTION_SPEC_VERSION})
    return message


def as_user(user_id: str) -> ClientCallContext:
    return ClientCallContext(service_parameters={"X-User-ID": user_id})


async def collect(client: Client, message: Message, user: str = "alice") -> list[Any]:
    return [
        r
        async for r in client.send_message(
            SendMessageRequest(message=message), context=as_user(user)
        )
    ]


def counting_agent(deltas: int, *, response_id: str = "chatcmpl-count") -> FunctionAgent:
    """``deltas`` text deltas ``t0 t1 …`` under one response id; no final text."""

    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        for i in range(deltas):
            yield AgentEvent.text_delta(f"t{i} ", response_id)

    return FunctionAgent(name="counter", description="counts", fn=run)


def blocking_agent(started: asyncio.Event, stopped: asyncio.Event) -> FunctionAgent:
    """Sends one delta, then waits forever; records that its iterator was closed."""

    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        try:
            yield AgentEvent.text_delta("first", "chatcmpl-block")
            started.set()
            await asyncio.Event().wait()
        finally:
            stopped.set()

    return FunctionAgent(name="blocker", description="blocks", fn=run)


def jsonrpc(method: str, params: dict[str, Any], rpc_id: str | int = "r1") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}


def go_message(
    text: str, *, message_id: str = "msg-1", context_id: str = "ctx-1"
) -> dict[str, Any]:
    """A user message exactly as trpc-agent-go's v0 client writes it (vector Q01)."""
    return {
        "contextId": context_id,
        "kind": "message",
        "messageId": message_id,
        "metadata": {"interaction_spec_version": "0.1", "invocation_id": "inv-1", "user_id": "u1"},
        "parts": [{"kind": "text", "text": text}],
        "role": "user",
    }


GO_HEADERS = {
    "Content-Type": "application/json; charset=utf-8",
    "Accept": "text/event-stream",
    "User-Agent": "trpc-a2a-go-client/0.1",
    "X-User-Id": "u1",
}


async def sse_results(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """The ``result`` (or ``error``) objects of an SSE response, in order."""
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            envelope = json.loads(line[5:])
            yield envelope.get("result", envelope)
