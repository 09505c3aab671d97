"""Small A2A servers outside trpc's dialect, on a2a-sdk alone (no bridge code): each one
answers the way some other SDK or server legitimately does, for the plain-A2A cases of
``test_plain_a2a_semantics.py``.

- :class:`ReplacingExecutor`: streams an artifact in ``append: true`` chunks, then sends
  the same artifact id again with ``append: false`` and the complete text (A2A: replace).
- :class:`StatusThenArtifactExecutor`: streams the answer as ``working`` status messages,
  then sends the complete text as the final artifact (ADK's legacy executor does this).
- :class:`SlowExecutor` served with ``non_blocking=True``: a unary ``SendMessage`` is
  answered at once with the task still ``working``; the answer comes later.
- :func:`status_first_frames`: a stream whose first frame is a status update, not a Task
  (a2a-sdk's own handler insists on a Task first, so this one is replayed as raw SSE).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    Artifact,
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from starlette.applications import Starlette

ANSWER = "Hello there."
PIECES = ("Hello", " there", ".")


def _task(context: RequestContext, state: TaskState) -> Task:
    return Task(
        id=context.task_id or "",
        context_id=context.context_id or "",
        status=TaskStatus(state=state),
    )


def _status(context: RequestContext, state: TaskState, text: str = "") -> TaskStatusUpdateEvent:
    status = TaskStatus(state=state)
    if text:
        status.message.CopyFrom(
            Message(message_id=f"status-{text}", role=Role.ROLE_AGENT, parts=[Part(text=text)])
        )
    return TaskStatusUpdateEvent(
        task_id=context.task_id or "", context_id=context.context_id or "", status=status
    )


def _artifact(
    context: RequestContext, text: str, *, append: bool, last: bool = False
) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id=context.task_id or "",
        context_id=context.context_id or "",
        artifact=Artifact(artifact_id="answer", parts=[Part(text=text)]),
        append=append,
        last_chunk=last,
    )


class _Executor(AgentExecutor):
    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


class ReplacingExecutor(_Executor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await event_queue.enqueue_event(_task(context, TaskState.TASK_STATE_WORKING))
        for index, piece in enumerate(PIECES):
            await event_queue.enqueue_event(_artifact(context, piece, append=index > 0))
        await event_queue.enqueue_event(_artifact(context, ANSWER, append=False, last=True))
        await event_queue.enqueue_event(_status(context, TaskState.TASK_STATE_COMPLETED))


class StatusThenArtifactExecutor(_Executor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await event_queue.enqueue_event(_task(context, TaskState.TASK_STATE_SUBMITTED))
        for piece in PIECES:
            await event_queue.enqueue_event(_status(context, TaskState.TASK_STATE_WORKING, piece))
        await event_queue.enqueue_event(_artifact(context, ANSWER, append=False, last=True))
        await event_queue.enqueue_event(_status(context, TaskState.TASK_STATE_COMPLETED))


@dataclass
class SlowExecutor(_Executor):
    """Works for ``delay`` seconds before it answers."""

    delay: float = 0.5

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await event_queue.enqueue_event(_task(context, TaskState.TASK_STATE_WORKING))
        await asyncio.sleep(self.delay)
        await event_queue.enqueue_event(_artifact(context, ANSWER, append=False, last=True))
        await event_queue.enqueue_event(_status(context, TaskState.TASK_STATE_COMPLETED))


class NonBlockingHandler(DefaultRequestHandler):
    """Answers every ``SendMessage`` at once, as servers that run tasks in the background
    do (A2A's ``returnImmediately``, whatever the client asked)."""

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Any:
        params.configuration.return_immediately = True
        return await super().on_message_send(params, context)


def _bound_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


@contextlib.asynccontextmanager
async def serve(executor: AgentExecutor, *, non_blocking: bool = False) -> AsyncIterator[str]:
    """Serve ``executor`` with a2a-sdk's handler over JSON-RPC 1.0 and 0.3 on one URL;
    yields the base URL (card at ``/.well-known/agent-card.json``)."""
    sock = _bound_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    card = AgentCard(
        name="plain-agent",
        description="a plain a2a-sdk agent",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
        ],
    )
    handler_type = NonBlockingHandler if non_blocking else DefaultRequestHandler
    handler = handler_type(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
    ]
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=routes), log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        yield url
    finally:
        server.should_exit = True
        await task


def status_first_frames() -> list[dict[str, Any]]:
    """0.3 stream results that open with a ``working`` status update (no Task frame)."""
    ids = {"taskId": "task-1", "contextId": "ctx-1"}

    def status(state: str, final: bool = False) -> dict[str, Any]:
        return {"kind": "status-update", **ids, "status": {"state": state}, "final": final}

    def artifact(text: str, append: bool) -> dict[str, Any]:
        part = {"kind": "text", "text": text}
        return {
            "kind": "artifact-update",
            **ids,
            "artifact": {"artifactId": "answer", "parts": [part]},
            "append": append,
        }

    return [
        status("working"),
        *(artifact(piece, index > 0) for index, piece in enumerate(PIECES)),
        status("completed", final=True),
    ]


def sse(results: list[dict[str, Any]]) -> list[bytes]:
    """Plain SSE frames (no ``event:`` lines), as a2a-sdk writes them."""
    return [
        f"data: {json.dumps({'jsonrpc': '2.0', 'id': 'r1', 'result': r})}\n\n".encode()
        for r in results
    ]
