"""A tfrs progress producer written on a2a-sdk alone, as docs/specs/tfrs-progress.md tells an
executor to write one: every ``working`` status update carries one Part with a text fallback and
``metadata["tfrs"]`` = the envelope as a JSON string; the answer comes only with the
``completed`` status. No bridge code makes its envelopes (the bridge's ``HttpListener``
only hosts it); ``DefaultRequestHandler`` and ``InMemoryTaskStore`` keep the task, so
``tasks/get`` history and ``SubscribeToTask`` behave as any a2a-sdk server's.

The script is deliberately untidy in the ways the envelope's rules allow: ``seq`` starts at 100,
has a gap, one block is sent twice, and a ``v: 2`` envelope, a broken one and a plain
working text sit among the good blocks. ``pause_after`` holds the run there until
:meth:`TfrsPeer.release` (for resubscribe and ``tasks/get`` while working).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    a2a_pb2_grpc,
)
from starlette.applications import Starlette

from trpc_bridge.server.http.listener import HttpListener

ANSWER = "It is 20°C in Beijing."


def _envelope(kind: str, seq: int, payload: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"v": 1, "kind": kind, "seq": seq, "payload": payload, **extra})


_CALL = {"tool": "get_weather", "tool_call_id": "call-1"}
#: (text fallback, metadata["tfrs"] or None) per working update, in sending order.
SCRIPT: list[tuple[str, str | None]] = [
    (
        "The user asks about the weather.",
        _envelope("thinking", 100, {"text": "The user asks about the weather."}, status="running"),
    ),
    (
        "calling get_weather",
        _envelope("tool_call", 101, _CALL, status="running", streamKey="call-1"),
    ),
    (
        "calling get_weather",
        _envelope("tool_call", 101, _CALL, status="running", streamKey="call-1"),
    ),  # sent twice
    (
        "Checking the forecast service.",
        _envelope(  # seq 102 is never sent
            "text", 103, {"text": "Checking the forecast service."}, status="running"
        ),
    ),
    ("get_weather done", _envelope("tool_call", 104, _CALL, status="done", streamKey="call-1")),
    (
        "from the future",
        json.dumps({"v": 2, "kind": "hologram", "seq": 1, "status": "running", "payload": {}}),
    ),
    ("a broken envelope", '{"v": 1, "kind": "text", "seq": '),
    ("plain progress line", None),
    ("cache miss", _envelope("error", 105, {"message": "cache miss"}, status="running")),
]
#: What a consumer merges from SCRIPT: the distinct blocks' (streamKey, seq), in order…
EXPECTED_BLOCKS = [("", 100), ("call-1", 101), ("", 103), ("call-1", 104), ("", 105)]
#: …and the fallback texts of the updates it cannot read as envelopes.
EXPECTED_LOOSE = ["from the future", "a broken envelope", "plain progress line"]


def _working(task_id: str, context_id: str, text: str, envelope: str | None) -> Any:
    part = Part(text=text)
    if envelope is not None:
        part.metadata.update({"tfrs": envelope})
    message = Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_AGENT,
        task_id=task_id,
        context_id=context_id,
        parts=[part],
    )
    status = TaskStatus(state=TaskState.TASK_STATE_WORKING, message=message)
    return TaskStatusUpdateEvent(task_id=task_id, context_id=context_id, status=status)


@dataclass
class ScriptedExecutor(AgentExecutor):
    pause_after: int | None = None
    _gate: asyncio.Event = field(default_factory=asyncio.Event)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        working = TaskStatus(state=TaskState.TASK_STATE_WORKING)
        await event_queue.enqueue_event(Task(id=task_id, context_id=context_id, status=working))
        for index, (text, envelope) in enumerate(SCRIPT):
            if index == self.pause_after:
                await self._gate.wait()
            await event_queue.enqueue_event(_working(task_id, context_id, text, envelope))
        answer = Message(
            message_id=str(uuid.uuid4()),
            role=Role.ROLE_AGENT,
            task_id=task_id,
            context_id=context_id,
            parts=[Part(text=ANSWER)],
        )
        done = TaskStatus(state=TaskState.TASK_STATE_COMPLETED, message=answer)
        await event_queue.enqueue_event(
            TaskStatusUpdateEvent(task_id=task_id, context_id=context_id, status=done)
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


@dataclass
class TfrsPeer:
    card: AgentCard
    base_url: str
    executor: ScriptedExecutor

    def release(self) -> None:
        self.executor._gate.set()


def _interface(url: str, binding: str, version: str = "1.0") -> AgentInterface:
    return AgentInterface(url=url, protocol_binding=binding, protocol_version=version)


@contextlib.asynccontextmanager
async def tfrs_peer(*, pause_after: int | None = None) -> AsyncIterator[TfrsPeer]:
    """The peer on 127.0.0.1: JSON-RPC 1.0 at ``/``, 0.3 at ``/v03``, REST at ``/rest``,
    and gRPC; the card at the well-known path."""
    http = HttpListener()
    grpc_server = grpc.aio.server()
    grpc_port = grpc_server.add_insecure_port("127.0.0.1:0")
    card = AgentCard(
        name="tfrs-peer",
        description="an a2a-sdk agent that reports progress in tfrs envelopes",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="weather", name="weather", description="weather", tags=["demo"])],
        supported_interfaces=[
            _interface(f"{http.url}/", "JSONRPC"),
            _interface(f"{http.url}/v03", "JSONRPC", "0.3"),
            _interface(f"{http.url}/rest", "HTTP+JSON"),
            _interface(f"127.0.0.1:{grpc_port}", "GRPC"),
        ],
    )
    executor = ScriptedExecutor(pause_after=pause_after)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    app = Starlette(
        routes=[
            *create_agent_card_routes(card),
            *create_jsonrpc_routes(handler, "/"),
            *create_jsonrpc_routes(handler, "/v03", enable_v0_3_compat=True),
            *create_rest_routes(handler, path_prefix="/rest"),
        ]
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(  # type: ignore[no-untyped-call]
        GrpcHandler(handler), grpc_server
    )
    await grpc_server.start()
    await http.start(app)
    try:
        yield TfrsPeer(card, http.url, executor)
    finally:
        executor._gate.set()
        await http.stop()
        await grpc_server.stop(None)
