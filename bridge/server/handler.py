"""The bridge's a2a-sdk ``RequestHandler``: one agent, served the way trpc-agent-go serves.

Why not ``DefaultRequestHandler``: its event path copies the whole ``Task`` twice per
event (cost grows with stream length), writes the whole task to the store per event,
evicts a consumer 1,024 events behind without telling it, and insists on a ``Task`` as
the first frame where trpc starts with a ``submitted`` status-update. Here, per request:

- one producer task drives ``agent.run()`` and encodes each event
  (:class:`~trpc_bridge.codecs.trpc_encode.StreamEncoder`, or the plain-A2A encoder when
  negotiation says so); frames go to the live task (incremental aggregate + fan-out to
  unbounded coalescing subscriber buffers): O(1) per event whatever the stream length;
- the finished ``Task`` is written to the task store once, at the end;
- ``tasks/cancel`` and the disconnect of the requesting stream (when nobody else is
  subscribed) cancel the producer, which closes the agent's iterator and publishes
  ``canceled``.

Every transport the SDK offers (JSON-RPC 1.0 and 0.3, REST, gRPC) calls into this class.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Protocol

from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.server.tasks import TaskStore
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from opentelemetry.trace import TracerProvider

from trpc_bridge.agent import Agent, agent_failure_message
from trpc_bridge.codecs.plain_a2a import PlainStreamEncoder
from trpc_bridge.codecs.trpc_encode import (
    EncodeOptions,
    StreamEncoder,
    StreamFrame,
    UnaryEncoder,
    task_status,
    unary_task_id,
)
from trpc_bridge.codecs.trpc_request import Negotiation, message_to_request, wants_trpc_encoding
from trpc_bridge.events import AgentEvent, AgentRequest, ErrorType
from trpc_bridge.server.identity import caller_id
from trpc_bridge.server.subscriber import DEFAULT_COALESCE_AFTER
from trpc_bridge.server.task_registry import LiveTask, TaskRegistry
from trpc_bridge.server.task_store import ID_LENGTH, owner_context
from trpc_bridge.telemetry.spans import annotate_current_span
from trpc_bridge.telemetry.tools import trace_tool_events


@dataclass(frozen=True)
class HandlerOptions:
    encode: EncodeOptions = field(default_factory=EncodeOptions)
    negotiation: Negotiation = Negotiation.AUTO
    #: Frames a lagging subscriber holds before text deltas are merged.
    coalesce_after: int = DEFAULT_COALESCE_AFTER
    #: Where ``execute_tool`` spans go; None = the global provider (``setup_tracing``).
    tracer_provider: TracerProvider | None = None


class _Run(Protocol):
    """What the producer drives: a stream encoder, or a unary encoder adapted to it."""

    done: bool

    def encode(self, event: AgentEvent) -> list[StreamFrame]: ...

    def close(self) -> list[StreamFrame]: ...


class _UnaryEncoder(Protocol):
    def add(self, event: AgentEvent) -> bool: ...

    def result(self, *, context_id: str, task_id: str) -> Message | Task: ...


class _UnaryRun:
    """Adapts a unary encoder to the producer: it collects; nothing is streamed."""

    def __init__(self, encoder: _UnaryEncoder) -> None:
        self.encoder = encoder
        self.done = False

    def encode(self, event: AgentEvent) -> list[StreamFrame]:
        self.done = not self.encoder.add(event)
        return []

    def close(self) -> list[StreamFrame]:
        self.done = True
        return []


def _canceled(live: LiveTask) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id=live.task_id,
        context_id=live.context_id,
        status=task_status(TaskState.TASK_STATE_CANCELED),
    )


class BridgeRequestHandler(RequestHandler):
    """Serves one :class:`~trpc_bridge.agent.Agent` over every a2a-sdk transport."""

    def __init__(
        self,
        agent: Agent,
        *,
        task_store: TaskStore,
        options: HandlerOptions | None = None,
    ) -> None:
        self.agent = agent
        self.options = options or HandlerOptions()
        self.registry = TaskRegistry(task_store)

    # --- starting a run -----------------------------------------------------------

    async def _prepare(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> tuple[AgentRequest, Message, str, LiveTask | None]:
        """The agent's request, the user message with its ids filled in, the caller, and
        the parked task the message continues (``None`` for a new task)."""
        message = params.message
        if not message.parts:
            raise InvalidParamsError(message="message must have at least one part")
        if len(message.context_id) > ID_LENGTH:  # the task store could not save the task
            raise InvalidParamsError(message=f"contextId is longer than {ID_LENGTH} characters")
        owner = caller_id(context)
        resumed = None
        if message.task_id:
            resumed = await self.registry.resume(
                message.task_id,
                owner,
                context_id=message.context_id,
                coalesce_after=self.options.coalesce_after,
            )
        user_message = Message()
        user_message.CopyFrom(message)
        user_message.message_id = message.message_id or f"msg-{uuid.uuid4()}"
        if resumed is not None:
            user_message.context_id = resumed.context_id  # a follow-up may leave it out
        user_message.context_id = user_message.context_id or f"ctx-{uuid.uuid4()}"
        request = message_to_request(user_message, user_id=owner)
        return request, user_message, owner, resumed

    def _trpc(self, request: AgentRequest) -> bool:
        return wants_trpc_encoding(self.options.negotiation, request.interaction_spec_version)

    def _live(
        self, task_id: str, message: Message, owner: str, resumed: LiveTask | None
    ) -> LiveTask:
        if resumed is not None:  # the follow-up joins the parked task's history
            resumed.aggregate.history.append(message)
            live = resumed
        else:
            live = LiveTask(
                task_id=task_id,
                context_id=message.context_id,
                owner=owner,
                user_message=message,
                coalesce_after=self.options.coalesce_after,
            )
            self.registry.add(live)
        annotate_current_span(task_id=live.task_id, conversation_id=live.context_id)
        return live

    def _first_frame(
        self, live: LiveTask, run: StreamEncoder | PlainStreamEncoder, resumed: bool
    ) -> StreamFrame:
        """``submitted`` for a new task; ``working`` for a parked one that continues."""
        if resumed:
            return TaskStatusUpdateEvent(
                task_id=live.task_id,
                context_id=live.context_id,
                status=task_status(TaskState.TASK_STATE_WORKING),
            )
        return run.start(app_name=self.agent.name, user_id=live.owner)

    async def _produce(
        self, live: LiveTask, run: _Run, request: AgentRequest, *, retire: bool
    ) -> None:
        """Drive the agent; publish frames; on cancel publish ``canceled``."""
        try:
            try:
                async with contextlib.aclosing(
                    trace_tool_events(
                        self.agent.run(request), tracer_provider=self.options.tracer_provider
                    )
                ) as events:
                    async for event in events:
                        for frame in run.encode(event):
                            live.publish(frame)
                        if run.done:
                            break
                for frame in run.close():
                    live.publish(frame)
            except asyncio.CancelledError:
                live.publish(_canceled(live))
            except Exception as exc:  # the agent failed: a terminal run_error
                message = agent_failure_message(self.agent.name, exc)
                failure = AgentEvent.failure(message, type=ErrorType.RUN)
                for frame in run.encode(failure):
                    live.publish(frame)
        finally:
            if retire:
                await self.registry.retire(live, self._settled(live))

    @staticmethod
    def _settled(live: LiveTask) -> Task:
        """The task to store once its run is over. trpc's unstructured error ends the
        stream without a terminal status; the stored task still has to say how it ended
        (a task waiting for input has not ended: it is parked)."""
        if not live.aggregate.terminal and not live.aggregate.interrupted:
            live.aggregate.status.CopyFrom(task_status(TaskState.TASK_STATE_FAILED))
        return live.aggregate.snapshot()

    # --- message/send -------------------------------------------------------------

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message:
        request, message, owner, resumed = await self._prepare(params, context)
        config = params.configuration
        history = config.history_length if config.HasField("history_length") else None
        if config.return_immediately or resumed is not None or not self._trpc(request):
            # Frames go to the live task as they come: the answer is the task (or, for a
            # plain direct reply, one Message); return_immediately returns it at once and
            # the run retires the task itself.
            task_id = resumed.task_id if resumed else unary_task_id(message.message_id)
            run = self._stream_encoder(request, task_id, message.context_id)
            live = self._live(task_id, message, owner, resumed)
            live.publish(self._first_frame(live, run, resumed is not None))
            detached = config.return_immediately
            live.producer = asyncio.create_task(self._produce(live, run, request, retire=detached))
            if detached:
                return live.aggregate.snapshot(history)
            await self._await_producer(live)
            direct = run.direct_reply() if isinstance(run, PlainStreamEncoder) else None
            if direct is not None and resumed is None:
                await self.registry.retire(live, None)
                return direct
            await self.registry.retire(live, self._settled(live))
            return live.aggregate.snapshot(history)
        encoder = UnaryEncoder(self.options.encode)
        live = self._live(unary_task_id(message.message_id), message, owner, None)
        live.producer = asyncio.create_task(
            self._produce(live, _UnaryRun(encoder), request, retire=False)
        )
        await self._await_producer(live)
        if live.aggregate.status.state == TaskState.TASK_STATE_CANCELED:
            final: Task | Message = live.aggregate.snapshot()
        else:
            final = encoder.result(context_id=live.context_id, task_id=live.task_id)
        await self.registry.retire(live, final if isinstance(final, Task) else None)
        return final

    async def _await_producer(self, live: LiveTask) -> None:
        assert live.producer is not None
        try:
            await asyncio.shield(live.producer)
        except asyncio.CancelledError:  # the caller went away: stop the agent too
            live.cancel()
            await self.registry.retire(live, None)
            raise

    def _stream_encoder(
        self, request: AgentRequest, task_id: str, context_id: str
    ) -> StreamEncoder | PlainStreamEncoder:
        if self._trpc(request):
            return StreamEncoder(
                task_id=task_id, context_id=context_id, options=self.options.encode
            )
        return PlainStreamEncoder(task_id=task_id, context_id=context_id)

    # --- message/stream and resubscribe ---------------------------------------------

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        request, message, owner, resumed = await self._prepare(params, context)
        task_id = resumed.task_id if resumed else f"task-{uuid.uuid4()}"
        run = self._stream_encoder(request, task_id, message.context_id)
        live = self._live(task_id, message, owner, resumed)
        subscriber = live.subscribe()
        live.publish(self._first_frame(live, run, resumed is not None))
        live.producer = asyncio.create_task(self._produce(live, run, request, retire=True))
        try:
            while (frame := await subscriber.next()) is not None:
                yield frame
        finally:
            live.unsubscribe(subscriber)
            # The requester left before the end and nobody else listens: stop the agent.
            if live.subscriber_count == 0:
                live.cancel()

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        owner = caller_id(context)
        live = await self.registry.revive(
            params.id, owner, coalesce_after=self.options.coalesce_after
        )
        if isinstance(live, Task):
            raise UnsupportedOperationError(message=f"Task {params.id} is in a terminal state")
        subscriber = live.subscribe()
        snapshot = live.aggregate.snapshot()  # same tick as subscribe: nothing is missed
        try:
            yield snapshot
            while (frame := await subscriber.next()) is not None:
                yield frame
        finally:
            live.unsubscribe(subscriber)
            self.registry.release(live)

    # --- tasks ----------------------------------------------------------------------

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task:
        owner = caller_id(context)
        history = params.history_length if params.HasField("history_length") else None
        live = self.registry.live(params.id, owner)
        if live is not None:
            return live.aggregate.snapshot(history)
        task = await self.registry.stored(params.id, owner)
        if task is None:
            raise TaskNotFoundError(message=f"Task {params.id} not found")
        if history is not None and len(task.history) > history:
            kept = list(task.history)[-history:] if history > 0 else []
            del task.history[:]
            task.history.extend(kept)
        return task

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task:
        owner = caller_id(context)
        live = await self.registry.revive(
            params.id, owner, coalesce_after=self.options.coalesce_after
        )
        if isinstance(live, Task):
            raise TaskNotCancelableError(message=f"Task {params.id} has already finished")
        if live.running:
            live.cancel()
            await live.finished.wait()
        else:  # parked, waiting for input: nothing runs, it just ends
            live.publish(_canceled(live))
            await self.registry.retire(live, live.aggregate.snapshot())
        return live.aggregate.snapshot()

    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        return await self.registry.store.list(params, owner_context(caller_id(context)))

    # --- not offered ----------------------------------------------------------------

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        raise PushNotificationNotSupportedError

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        raise PushNotificationNotSupportedError

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        raise PushNotificationNotSupportedError

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError
