"""The bridge's a2a-sdk ``RequestHandler``: the A2A door, a thin protocol adapter.

Every transport the SDK offers (JSON-RPC 1.0 and 0.3, REST, gRPC 1.0 and 0.3) calls into
this class. It turns the call into an :class:`~trpc_bridge.events.AgentRequest` and a
:class:`~trpc_bridge.server.runner.IncomingCall`, picks the caller's encoding on the seam
(:func:`~trpc_bridge.codecs.encoding.select_encoding`; for streams
:func:`~trpc_bridge.codecs.encoding.stream_encoding`, with the overlays the caller asked
for, such as tfrs progress) and lets the agent runner drive
the run as a :class:`~trpc_bridge.server.tasks.live_task.LiveTask`; identity, tracing,
failures and cancellation are the runner's.

Every method a transport calls runs inside
:func:`~trpc_bridge.server.a2a.bug_boundary.bug_boundary`: an exception that is not an A2A
error is the server's bug, answered "internal server error" without its text.

Why not ``DefaultRequestHandler``: its event path copies the whole ``Task`` twice per
event (cost grows with stream length), writes the whole task to the store per event,
evicts a consumer 1,024 events behind without telling it, and insists on a ``Task`` as
the first frame where trpc starts with a ``submitted`` status-update. Here the live task
aggregates incrementally and fans out to unbounded coalescing subscriber buffers (O(1)
per event whatever the stream length); the task store gets the task when it is accepted,
a batched checkpoint while it runs (a database store, see ``replicas/journal.py``) and how it
ended: before the caller sees the end, or in memory right after it, in the same turn
(``tasks/registry.py``, ``a2a/after_answer.py``). ``tasks/cancel`` and the disconnect of
the requesting stream (when nobody else is subscribed) cancel the producer, which closes
the agent's iterator and publishes ``canceled``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import (
    A2AError,
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from trpc_bridge.codecs.a2a.packed import PackedResult, as_result
from trpc_bridge.codecs.a2a.proto_struct import struct_to_json
from trpc_bridge.codecs.encoding import (
    EncodingRequest,
    RunFrame,
    RunTarget,
    StreamFrame,
    UnaryEncoding,
    select_encoding,
    stream_encoding,
)
from trpc_bridge.codecs.trpc.request import message_to_request
from trpc_bridge.codecs.trpc.runs import UnaryEncoder, unary_task_id
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.names import ID_LENGTH, new_id, shown_id
from trpc_bridge.server.a2a.after_answer import after_answer
from trpc_bridge.server.a2a.bug_boundary import bug_boundary
from trpc_bridge.server.a2a.call_context import a2a_caller, wire_version
from trpc_bridge.server.a2a.card import CardForms
from trpc_bridge.server.a2a.push_requests import PushConfigRequests
from trpc_bridge.server.a2a.task_reads import check_list_request, history_length, trimmed
from trpc_bridge.server.options import EncodingOptions
from trpc_bridge.server.proxying.unary_relay import unary_relay_for
from trpc_bridge.server.push.delivery import PushDelivery
from trpc_bridge.server.runner import AgentRunner, IncomingCall
from trpc_bridge.server.tasks.live_task import LiveTask
from trpc_bridge.server.tasks.registry import TaskRegistry
from trpc_bridge.server.tasks.subscriber import F, Subscriber, SubscriberBase, TextSubscriber


def _answer(
    encoder: UnaryEncoding, *, context_id: str, task_id: str
) -> Task | Message | PackedResult | None:
    """The encoder's result; packed when it is trpc's (:meth:`UnaryEncoder.answer`)."""
    if isinstance(encoder, UnaryEncoder):
        return encoder.answer(context_id=context_id, task_id=task_id)
    return encoder.result(context_id=context_id, task_id=task_id)


class _UnaryRun:
    """Adapts a unary encoder to the producer: it collects; nothing is streamed."""

    def __init__(self, encoder: UnaryEncoding) -> None:
        self.encoder = encoder
        self.done = False

    def start(self, *, app_name: str, user_id: str) -> list[StreamFrame]:
        return []

    def encode(self, event: AgentEvent) -> list[RunFrame]:
        self.done = not self.encoder.add(event)
        return []

    def close(self) -> list[StreamFrame]:
        self.done = True
        return []


@dataclass(frozen=True)
class _Call:
    """One message call, prepared: what the agent is asked and how to answer."""

    request: AgentRequest
    message: Message
    caller: IncomingCall
    encoding_request: EncodingRequest
    #: The parked task (waiting for input) this message continues; None: a new task.
    resumed: LiveTask | None = None
    #: The door takes text deltas (:meth:`BridgeRequestHandler.stream_batches`).
    text_deltas: bool = False


class BridgeRequestHandler(PushConfigRequests, RequestHandler):
    """Serves one agent, through its :class:`AgentRunner`, over every a2a-sdk transport;
    push notifications when ``push`` is given."""

    def __init__(
        self,
        runner: AgentRunner,
        options: EncodingOptions | None = None,
        *,
        push: PushDelivery | None = None,
    ) -> None:
        self.runner = runner
        self.options = options or EncodingOptions()
        self.push = push
        #: The card's forms as served now, set by the server (``card_routes``).
        self.cards: Callable[[], CardForms] | None = None

    @property
    def extended_card(self) -> AgentCard | None:
        """The full card (every interface: see ``card.public_card``), when it is served."""
        forms = None if self.cards is None else self.cards()
        return forms.full if forms is not None and forms.extended else None

    @property
    def registry(self) -> TaskRegistry:
        return self.runner.tasks

    # --- starting a run -----------------------------------------------------------

    async def _prepare(
        self, params: SendMessageRequest, context: ServerCallContext, *, text_deltas: bool = False
    ) -> _Call:
        if self.registry.closing:  # a keep-alive connection after SIGTERM: try elsewhere
            raise InternalError(message="the server is shutting down; send it again")
        message = params.message
        if not message.parts:
            raise InvalidParamsError(message="message must have at least one part")
        history_length(params.configuration)  # streamed or not, a negative one is refused
        if len(message.context_id) > ID_LENGTH:  # the task store could not save the task
            raise InvalidParamsError(message=f"contextId is longer than {ID_LENGTH} characters")
        caller = a2a_caller(context, self.runner)
        resumed = None
        if message.task_id:
            resumed = await self.registry.resume(
                message.task_id,
                caller.user_id,
                context_id=message.context_id,
                coalesce_after=self.options.coalesce_after,
            )
        user_message = Message()
        user_message.CopyFrom(message)
        user_message.message_id = message.message_id or new_id("msg")
        if resumed is not None:  # a follow-up may leave the context id out
            user_message.context_id = resumed.context_id
        user_message.context_id = user_message.context_id or new_id("ctx")
        request = message_to_request(user_message, user_id=caller.user_id)
        negotiated = EncodingRequest(
            spec_version=request.interaction_spec_version,
            metadata=struct_to_json(message.metadata) if message.metadata else {},
            extensions=frozenset(context.requested_extensions),
            headers=caller.headers,
            wire=wire_version(context),
            part_metadata=tuple(struct_to_json(p.metadata) for p in message.parts),
        )
        return _Call(request, user_message, caller, negotiated, resumed, text_deltas)

    def _live(self, task_id: str, call: _Call) -> LiveTask:
        if call.resumed is not None:  # the follow-up joins the parked task's history
            call.resumed.aggregate.history.append(call.message)
            return call.resumed
        live = LiveTask(
            task_id=task_id,
            context_id=call.message.context_id,
            owner=call.caller.user_id,
            user_message=call.message,
            coalesce_after=self.options.coalesce_after,
        )
        live.observer = self.registry.observer  # its first frames come before it runs
        return live

    async def _inline_push(self, params: SendMessageRequest, live: LiveTask, call: _Call) -> None:
        """A push config sent with the message applies to its task from the first frame;
        a parked task's configs (stored, perhaps by a server since restarted) to its
        follow-up."""
        if call.resumed is not None and self.push is not None:
            await self.watch_stored_configs(live.task_id, live.owner)
        if params.configuration.HasField("task_push_notification_config"):
            config = params.configuration.task_push_notification_config
            await self.attach_push_config(live.task_id, config, live.owner, running=True)

    def _target(self, task_id: str, call: _Call) -> RunTarget:
        return RunTarget(
            task_id=task_id,
            context_id=call.message.context_id,
            options=self.options.encode,
            wire=call.encoding_request.wire,
            text_deltas=call.text_deltas,
        )

    # --- message/send -------------------------------------------------------------

    @bug_boundary
    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message:
        return as_result(await self._send(params, context))

    @bug_boundary
    async def send_answer(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message | PackedResult:
        """:meth:`on_message_send`'s answer, for a door that writes it itself: packed
        (:class:`~trpc_bridge.codecs.a2a.packed.PackedResult`) when the encoding packed it
        from the run's messages (``jsonrpc03``)."""
        return await self._send(params, context)

    async def _send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message | PackedResult:
        call = await self._prepare(params, context)
        config = params.configuration
        history = history_length(config)
        if config.return_immediately or call.resumed is not None:
            wait = not config.return_immediately
            return await self._send_as_task(params, call, history, wait=wait)
        task_id = unary_task_id(call.message.message_id)
        encoding = select_encoding(self.options.negotiation, call.encoding_request)
        encoder = encoding.unary(self._target(task_id, call))
        live = self._live(task_id, call)
        await self._inline_push(params, live, call)
        run = encoder.streamed or _UnaryRun(encoder)
        for first in run.start(app_name=self.runner.agent.name, user_id=call.caller.user_id):
            live.publish(first)
        self.runner.start(
            live,
            call.request,
            call.caller,
            run,
            encoding=encoding.name,
            streamed=False,
            source=unary_relay_for(self.runner.agent, encoder),
        )
        await self._wait(live)
        final: Task | Message | PackedResult | None = None
        if live.aggregate.status.state != TaskState.TASK_STATE_CANCELED:
            final = _answer(encoder, context_id=live.context_id, task_id=live.task_id)
        if final is None:  # the answer is the task (plain A2A, or canceled)
            answer: Task | Message | PackedResult = live.snapshot(history)
            await self._retire(live, live.snapshot, context)
            return answer
        packed = final

        def stored() -> Task | None:
            result = as_result(packed)
            return result if isinstance(result, Task) else None

        await self._retire(live, stored, context)
        return final

    async def _retire(
        self, live: LiveTask, stored: Callable[[], Task | None], context: ServerCallContext
    ) -> None:
        """Store the task ``stored()`` gives for ``live`` and end it: once the answer has
        left when the door can say when and the store keeps tasks in this process (see
        ``server/a2a/after_answer.py``), else now."""
        later = after_answer(context)
        registry = self.registry
        if later is not None and registry.stores_after_end:
            later.leave(lambda: registry.retire(live, stored()))
        else:
            await registry.retire(live, stored())

    async def _send_as_task(
        self, params: SendMessageRequest, call: _Call, history: int | None, *, wait: bool
    ) -> Task:
        """Run as a stream into the task and answer with the task: at once
        (``return_immediately``; the run stores the task when it ends) or at the end (a
        follow-up to a parked task, which is a task whatever the encoding)."""
        task_id = call.resumed.task_id if call.resumed else unary_task_id(call.message.message_id)
        live = await self._start_streamed(params, call, task_id, None)
        if wait:
            await self._wait(live)
        return live.snapshot(history)

    async def _start_streamed(
        self,
        params: SendMessageRequest,
        call: _Call,
        task_id: str,
        subscriber: SubscriberBase[Any] | None,
    ) -> LiveTask:
        """Start the run as a stream into its live task (stored when it ends);
        ``subscriber``, when given, sees it from the first frame."""
        encoder = stream_encoding(
            self.options.negotiation, call.encoding_request, self._target(task_id, call)
        )
        live = self._live(task_id, call)
        await self._inline_push(params, live, call)
        if subscriber is not None:
            live.add_subscriber(subscriber)
        if call.resumed is not None:
            live.publish(live.status_update(TaskState.TASK_STATE_WORKING))
        else:
            for first in encoder.start(app_name=self.runner.agent.name, user_id=live.owner):
                live.publish(first)
        try:
            await self.registry.accept(live)  # stored before the caller hears of it
        except Exception:
            if subscriber is not None:
                live.unsubscribe(subscriber)
            self.registry.release(live)
            raise
        # The encoding's name is a metrics attribute: looked up only when metrics are on.
        name = (
            select_encoding(self.options.negotiation, call.encoding_request).name
            if self.runner.metrics is not None
            else ""
        )
        self.runner.start(
            live,
            call.request,
            call.caller,
            encoder,
            self.registry.finish,
            encoding=name,
        )
        # The run takes its first step before the caller's first write: a remote agent's
        # request is on its way while the task's first frames are written, not after
        # (``bench/README.md``). Its frames go after those published above.
        await asyncio.sleep(0)
        return live

    async def _wait(self, live: LiveTask) -> None:
        try:
            await live.wait()
        except asyncio.CancelledError:  # the caller went away: stop the agent too
            live.cancel()
            await self.registry.retire(live, None)
            raise

    # --- message/stream and resubscribe ---------------------------------------------

    @bug_boundary
    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        batches = self._batches(params, context, Subscriber(self.options.coalesce_after))
        async with contextlib.aclosing(batches):
            async for batch in batches:
                for frame in batch:
                    yield frame

    def stream_batches(
        self, params: SendMessageRequest, context: ServerCallContext, *, text_deltas: bool
    ) -> AsyncGenerator[Sequence[RunFrame]]:
        """``message/stream`` as lists of the frames ready at once, for a door that writes
        each list in one go (``jsonrpc03``); ``text_deltas``: it takes text deltas as they
        come (else protobuf only). Closing it stops the run as a disconnect does."""
        if text_deltas:
            subscriber = TextSubscriber(self.options.coalesce_after)
            return self._batches(params, context, subscriber, text_deltas=True)
        return self._batches(params, context, Subscriber(self.options.coalesce_after))

    @bug_boundary
    async def _batches(
        self,
        params: SendMessageRequest,
        context: ServerCallContext,
        subscriber: SubscriberBase[F],
        *,
        text_deltas: bool = False,
    ) -> AsyncGenerator[list[F]]:
        call = await self._prepare(params, context, text_deltas=text_deltas)
        task_id = call.resumed.task_id if call.resumed else new_id("task")
        live = await self._start_streamed(params, call, task_id, subscriber)
        try:
            while (batch := await subscriber.next_batch()) is not None:
                yield batch
        finally:
            live.unsubscribe(subscriber)
            # The requester left before the end and nobody else listens: stop the agent.
            if live.subscriber_count == 0:
                live.cancel()

    @bug_boundary
    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        owner = a2a_caller(context, self.runner).user_id
        live = await self.registry.revive(
            params.id, owner, coalesce_after=self.options.coalesce_after
        )
        if isinstance(live, Task):
            raise UnsupportedOperationError(
                message=f"Task {shown_id(params.id)} is in a terminal state"
            )
        subscriber = live.subscribe()
        snapshot = live.snapshot()  # same tick as subscribe: nothing is missed
        try:
            yield snapshot
            while (frame := await subscriber.next()) is not None:
                yield frame
        finally:
            live.unsubscribe(subscriber)
            self.registry.release(live)  # a parked task nobody else uses

    # --- tasks ----------------------------------------------------------------------

    @bug_boundary
    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task:
        owner = a2a_caller(context, self.runner).user_id
        history = history_length(params)
        live = self.registry.live(params.id, owner)
        if live is not None:
            return live.snapshot(history)
        task = await self.registry.current_task(params.id, owner)
        if task is None:
            raise TaskNotFoundError(message=f"Task {shown_id(params.id)} not found")
        return trimmed(task, history)

    @bug_boundary
    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task:
        owner = a2a_caller(context, self.runner).user_id
        live = await self.registry.revive(
            params.id, owner, coalesce_after=self.options.coalesce_after
        )
        if isinstance(live, Task):
            raise TaskNotCancelableError(message=f"Task {shown_id(params.id)} has already finished")
        if live.running:
            return await live.cancelled()
        task = await live.cancelled()  # parked: nothing runs, the task just ends
        await self.registry.retire(live, task)
        return task

    @bug_boundary
    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        check_list_request(params)
        owner = a2a_caller(context, self.runner).user_id
        try:
            page = await self.registry.list_tasks(params, owner)
        except A2AError:  # a page token the store cannot read (it would quote it whole)
            raise InvalidParamsError(
                message="pageToken is not one this server issued: start without it"
            ) from None
        history = history_length(params)
        for task in page.tasks:
            trimmed(task, history, artifacts=params.include_artifacts)
        return page

    # --- not offered ----------------------------------------------------------------

    @bug_boundary
    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        card = self.extended_card
        if card is None:
            raise ExtendedAgentCardNotConfiguredError
        return card
