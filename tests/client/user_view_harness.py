"""The parts under test, in one process, for the "what the user sees" properties: an
upstream A2A server replaying a generated run (``replay_server.ReplayPeer``, reached
over httpx's ASGI transport), ``RemoteAgent`` on its real JSON-RPC transport, the
``call`` printer, and ``trpc-bridge proxy`` (a ``BridgeServer`` serving that
``RemoteAgent``, called as any A2A client would: JSON-RPC 0.3 or 1.0, with or without
trpc's ``interaction_spec_version``), each rendered as a :class:`~user_view.UserView`."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import httpx
from replay_server import ReplayPeer
from user_view import Shown, UserView, stream_view, unary_view

from trpc_bridge.cli.call import CallPrinter
from trpc_bridge.client import RemoteAgent
from trpc_bridge.client.card import ResolvedCard
from trpc_bridge.client.jsonrpc import JsonRpcTransport, stream_result
from trpc_bridge.client.sse import read_data
from trpc_bridge.codecs.a2a.frames import Frame, read_result
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.message_aggregate import MessageAggregator
from trpc_bridge.server import BridgeServer, ServerOptions

UPSTREAM = "http://upstream"
#: A plain A2A agent's card: both wires on one JSON-RPC URL, no trpc dialect.
PLAIN_CARD: dict[str, Any] = {
    "name": "plain-peer",
    "description": "a generated A2A peer",
    "version": "1.0.0",
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [{"id": "s", "name": "s", "description": "s", "tags": []}],
    "supportedInterfaces": [
        {"url": f"{UPSTREAM}/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": f"{UPSTREAM}/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
    ],
}


def sse(results: list[dict[str, Any]]) -> list[bytes]:
    """Plain SSE frames (no ``event:`` lines), as a2a-sdk writes them."""
    return [
        f"data: {json.dumps({'jsonrpc': '2.0', 'id': 'r1', 'result': r})}\n\n".encode()
        for r in results
    ]


# --- views of what each part shows ----------------------------------------------------


def events_view(events: list[AgentEvent]) -> UserView:
    """What a run's events show (the messages ``MessageAggregator`` folds them into)."""
    error = next((e.error.message for e in events if e.error and e.is_terminal_error()), None)
    shown = tuple(
        Shown(m.id, m.text, m.reasoning, tuple(c.function.name for c in m.tool_calls))
        for m in MessageAggregator().extend(events).messages
        if m.text or m.reasoning or m.tool_calls
    )
    return UserView(shown, error).merged()


def json_lines_view(lines: list[str]) -> UserView:
    """What ``call --json`` printed, read back; every tool call must be typed."""
    for line in lines:
        for choice in json.loads(line).get("choices", []):
            for side in ("message", "delta"):
                for call in choice.get(side, {}).get("tool_calls", []):
                    assert call.get("type") == "function", line
    return events_view([AgentEvent.model_validate_json(line) for line in lines])


_RESET = "\x1b[0m"
_DIM = "\x1b[2m"
_TOOL_LINE = re.compile(r"^\x1b\[36m→ (?P<name>[^(]*)\(")


@dataclass
class Printed:
    """``call``'s console output, read back from its writes (colour on, so that answer,
    reasoning and lines tell apart)."""

    text: str = ""
    reasoning: str = ""
    tools: list[str] = field(default_factory=list)
    replaced: bool = False

    @classmethod
    def read(cls, writes: list[str]) -> Printed:
        out = cls()
        for write in writes:
            if write == "\n":
                continue  # the view's own line break between kinds
            if write.endswith(_RESET + "\n"):
                if match := _TOOL_LINE.match(write):
                    out.tools.append(match["name"])
                out.replaced = out.replaced or "(complete answer)" in write
            elif write.startswith(_DIM):
                out.reasoning += write[len(_DIM) : -len(_RESET)]
            else:
                out.text += write[: -len(_RESET)]
        return out


# --- the parts ----------------------------------------------------------------------------


class Upstream:
    """A replaying A2A peer and the ``RemoteAgent`` s that call it (one per wire)."""

    def __init__(self) -> None:
        self.peer = ReplayPeer(card=PLAIN_CARD)
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.peer.app()), base_url=UPSTREAM
        )
        self.card = ResolvedCard.read(PLAIN_CARD, UPSTREAM)

    def agent(self, version: str) -> RemoteAgent:
        endpoint = self.card.choose("jsonrpc", version)
        return RemoteAgent(self.card, endpoint, JsonRpcTransport(self.http, endpoint), self.http)

    def replay(self, stream: list[dict[str, Any]], unary: dict[str, Any]) -> None:
        self.peer.stream_chunks = sse(stream)
        self.peer.send_result = unary
        self.peer.calls.clear()

    async def aclose(self) -> None:
        await self.http.aclose()


async def run_events(agent: RemoteAgent, *, stream: bool) -> list[AgentEvent]:
    return [e async for e in agent.run(AgentRequest(text="hi", context_id="c1"), stream=stream)]


def printed(events: list[AgentEvent]) -> tuple[Printed, list[str]]:
    """The console output and the ``--json`` lines of ``call`` for these events."""
    writes: list[str] = []
    console = CallPrinter(writes.append, color=True)
    lines: list[str] = []
    as_json = CallPrinter(lines.append, json_lines=True)
    for event in events:
        console.show(event)
        as_json.show(event)
    console.close(failed=False)
    return Printed.read(writes), [line.rstrip("\n") for line in lines]


@dataclass(frozen=True)
class Caller:
    """An A2A client of the proxy."""

    wire: str  # "0.3" | "1.0"
    trpc: bool  # declares trpc's interaction_spec_version
    stream: bool

    def request(self) -> tuple[dict[str, Any], dict[str, str]]:
        metadata = {"interaction_spec_version": "0.1"} if self.trpc else {}
        if self.wire == "0.3":
            message: dict[str, Any] = {
                "kind": "message",
                "messageId": "u1",
                "role": "user",
                "parts": [{"kind": "text", "text": "hi"}],
            }
            method = "message/stream" if self.stream else "message/send"
            headers: dict[str, str] = {}
        else:
            message = {"messageId": "u1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
            method = "SendStreamingMessage" if self.stream else "SendMessage"
            headers = {"A2A-Version": "1.0"}
        if metadata:
            message["metadata"] = metadata
        body = {"jsonrpc": "2.0", "id": "p1", "method": method, "params": {"message": message}}
        return body, headers


class Proxy:
    """``trpc-bridge proxy`` in front of :class:`Upstream`, one per upstream wire."""

    def __init__(self, upstream: Upstream, version: str) -> None:
        self.server = BridgeServer(upstream.agent(version), ServerOptions(grpc_port=None))
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.server.starlette_app()),
            base_url="http://proxy",
            timeout=30,
        )

    async def view(self, caller: Caller) -> tuple[UserView, list[Frame]]:
        body, headers = caller.request()
        method = body["method"]
        response = await self.http.post("/", json=body, headers=headers)
        if caller.stream:
            frames = [
                frame
                async for data in read_data(response.aiter_bytes())
                if (frame := stream_result(data, method)) is not None
            ]
            return stream_view(frames), frames
        result = read_result(response.json()["result"])
        return unary_view(result), [result]

    async def aclose(self) -> None:
        await self.http.aclose()
