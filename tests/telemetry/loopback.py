"""A real a2a-sdk server (JSON-RPC 1.0 + 0.3, REST, gRPC) on 127.0.0.1 with the bridge's
trace middleware and interceptor installed, and a real a2a-sdk client per transport.

Used by the telemetry tests and by ``bench/tracing.py``. The agent is a plain a2a-sdk
executor that streams ``deltas`` artifact chunks and records the trace context it runs
under, so tests can check that the caller's context reached the agent.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import grpc
import httpx
from a2a.client import ClientCallContext, ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.client.interceptors import ClientCallInterceptor
from a2a.helpers import new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    Artifact,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    a2a_pb2_grpc,
)
from opentelemetry import baggage, trace
from starlette.applications import Starlette

from trpc_bridge.server.http.listener import HttpListener
from trpc_bridge.telemetry.client import TraceContextInterceptor
from trpc_bridge.telemetry.server import TraceContextMiddleware, TraceContextServerInterceptor

AGENT_NAME = "loopback"


@dataclass
class Seen:
    """What the executor observed while running one request."""

    span_context: trace.SpanContext
    baggage: dict[str, object]
    #: The ``traceparent`` the request carried (HTTP header or gRPC metadata), if any.
    traceparent: str | None


@dataclass
class StreamingExecutor(AgentExecutor):
    """Streams ``deltas`` text chunks into one artifact, then completes the task."""

    deltas: int = 3
    seen: list[Seen] = field(default_factory=list)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.seen.append(
            Seen(
                trace.get_current_span().get_span_context(),
                dict(baggage.get_all()),
                _traceparent(context),
            )
        )
        task_id, context_id = context.task_id or "", context.context_id or ""
        await event_queue.enqueue_event(
            Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_WORKING),
            )
        )
        for index in range(self.deltas):
            await event_queue.enqueue_event(
                TaskArtifactUpdateEvent(
                    task_id=task_id,
                    context_id=context_id,
                    artifact=Artifact(artifact_id="answer", parts=[Part(text=f"t{index} ")]),
                    append=index > 0,
                    last_chunk=index == self.deltas - 1,
                )
            )
        await event_queue.enqueue_event(
            TaskStatusUpdateEvent(
                task_id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED),
            )
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def _traceparent(context: RequestContext) -> str | None:
    state = context.call_context.state if context.call_context else {}
    if "headers" in state:
        value: str | None = state["headers"].get("traceparent")
        return value
    metadata = state["grpc_context"].invocation_metadata() or ()
    return next((v for k, v in metadata if k == "traceparent"), None)


@dataclass
class LoopbackServer:
    card: AgentCard
    executor: AgentExecutor
    base_url: str

    @property
    def seen(self) -> list[Seen]:
        assert isinstance(self.executor, StreamingExecutor)
        return self.executor.seen


@contextlib.asynccontextmanager
async def serve(
    *,
    deltas: int = 3,
    executor: AgentExecutor | None = None,
    traced: bool = True,
    tracer_provider: trace.TracerProvider | None = None,
    record_content: bool | None = None,
) -> AsyncIterator[LoopbackServer]:
    """Serve ``executor`` (default: :class:`StreamingExecutor`) on 127.0.0.1 over HTTP
    (JSON-RPC at ``/``, REST at ``/rest``, 0.3 JSON-RPC at ``/v03``) and gRPC, with
    tracing installed when ``traced``."""
    # Both listeners bind before the card is written: it names their addresses.
    http = HttpListener()
    interceptors = []
    if traced:
        interceptors.append(
            TraceContextServerInterceptor(
                agent_name=AGENT_NAME,
                tracer_provider=tracer_provider,
                record_content=record_content,
            )
        )
    grpc_server = grpc.aio.server(interceptors=interceptors)
    grpc_port = grpc_server.add_insecure_port("127.0.0.1:0")
    base = http.url
    card = AgentCard(
        name=AGENT_NAME,
        description="loopback test agent",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        supported_interfaces=[
            AgentInterface(url=f"{base}/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=f"{base}/v03", protocol_binding="JSONRPC", protocol_version="0.3"),
            AgentInterface(
                url=f"{base}/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"
            ),
            AgentInterface(
                url=f"127.0.0.1:{grpc_port}", protocol_binding="GRPC", protocol_version="1.0"
            ),
        ],
    )
    executor = executor or StreamingExecutor(deltas=deltas)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/"),
        *create_jsonrpc_routes(handler, "/v03", enable_v0_3_compat=True),
        *create_rest_routes(handler, path_prefix="/rest"),
    ]
    app = Starlette(routes=routes)
    if traced:
        app.add_middleware(
            TraceContextMiddleware,
            agent_name=AGENT_NAME,
            tracer_provider=tracer_provider,
            record_content=record_content,
        )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(  # type: ignore[no-untyped-call]
        GrpcHandler(handler), grpc_server
    )
    await grpc_server.start()
    await http.start(app)
    try:
        yield LoopbackServer(card=card, executor=executor, base_url=base)
    finally:
        await http.stop()
        await grpc_server.stop(None)


@contextlib.asynccontextmanager
async def connect(
    server: LoopbackServer,
    binding: str,
    *,
    protocol_version: str = "1.0",
    streaming: bool = True,
    traced: bool = True,
    tracer_provider: trace.TracerProvider | None = None,
) -> AsyncIterator[Client]:
    """An a2a-sdk client for one interface of the card, with the trace interceptor."""
    card = AgentCard()
    card.CopyFrom(server.card)
    chosen = [
        interface
        for interface in server.card.supported_interfaces
        if interface.protocol_binding == binding and interface.protocol_version == protocol_version
    ]
    del card.supported_interfaces[:]
    card.supported_interfaces.extend(chosen)
    async with httpx.AsyncClient(timeout=30) as http:
        config = ClientConfig(
            streaming=streaming,
            httpx_client=http,
            grpc_channel_factory=grpc.aio.insecure_channel,
            supported_protocol_bindings=[binding],
        )
        interceptors: list[ClientCallInterceptor] = [TraceContextInterceptor()] if traced else []
        client = ClientFactory(config).create(card, interceptors=interceptors)
        try:
            yield client
        finally:
            await client.close()


def user_message(text: str = "hi", *, context_id: str = "") -> SendMessageRequest:
    message = new_text_message(text, context_id=context_id or uuid.uuid4().hex, role=Role.ROLE_USER)
    return SendMessageRequest(message=message)


async def call(
    client: Client, request: SendMessageRequest, context: ClientCallContext | None = None
) -> list[StreamResponse]:
    return [response async for response in client.send_message(request, context=context)]
