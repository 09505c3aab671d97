"""A live task: one running agent invocation, and the journal it may be written to.

A :class:`LiveTask` owns its lifecycle: :meth:`LiveTask.start` runs one producer that
encodes the run's events and :meth:`LiveTask.publish`-es each frame to the incremental
aggregate and to every subscriber (the requesting stream and any ``tasks/resubscribe``);
:meth:`LiveTask.cancel` stops the producer, which then publishes ``canceled`` itself;
:meth:`LiveTask.wait` waits for the end; :meth:`LiveTask.snapshot` is the task as it
stands. A streamed task is *settled* before the frame that ends its run reaches anyone
(see :mod:`~trpc_bridge.server.tasks.registry`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, Protocol, Self

from a2a.types import Message, Task, TaskState, TaskStatusUpdateEvent

from trpc_bridge.codecs.a2a.text_delta import TextDelta
from trpc_bridge.codecs.encoding import StreamEncoding, StreamFrame
from trpc_bridge.codecs.trpc.stream_frames import task_status
from trpc_bridge.events import AgentEvent
from trpc_bridge.server.tasks.interruption import interrupted_status
from trpc_bridge.server.tasks.states import INTERRUPTED_STATES, TERMINAL_STATES
from trpc_bridge.server.tasks.subscriber import Subscriber, SubscriberBase
from trpc_bridge.server.tasks.task_aggregate import TaskAggregate

#: Events a producer handles before it lets the event loop run others: writers then send
#: what is buffered in batches of about this size (one write each), other requests are
#: served in between, and the agent's pace is not otherwise affected.
YIELD_EVERY = 64

#: Called once when a producer has finished (the task may not be terminal).
OnEnd = Callable[["LiveTask"], Awaitable[None]]


class FrameObserver(Protocol):
    """Sees every frame of the live tasks it watches (push delivery)."""

    def watches(self, task_id: str) -> bool: ...

    def observe(self, task_id: str, frame: StreamFrame) -> None: ...


#: Stores the task before the frame that ends its run is delivered; returns the frame to
#: deliver instead when it could not (None: stored).
Settle = Callable[["LiveTask"], Awaitable[StreamFrame | None]]


def ends_run(frame: StreamFrame) -> bool:
    """A status after which the run produces nothing (terminal, or waiting for input)."""
    return isinstance(frame, TaskStatusUpdateEvent) and (
        frame.status.state in TERMINAL_STATES or frame.status.state in INTERRUPTED_STATES
    )


class LiveTask:
    """One running agent invocation."""

    #: The run is on another replica (a MirrorTask follows it here).
    remote = False

    def __init__(
        self,
        *,
        task_id: str,
        context_id: str,
        owner: str,
        user_message: Message,
        coalesce_after: int,
    ) -> None:
        self.task_id = task_id
        self.context_id = context_id
        self.owner = owner
        self.aggregate = TaskAggregate(
            task_id=task_id, context_id=context_id, user_message=user_message
        )
        self._producer: asyncio.Task[None] | None = None
        self._finished = asyncio.Event()
        self._subscribers: list[SubscriberBase[Any]] = []
        self._coalesce_after = coalesce_after
        self.observer: FrameObserver | None = None
        #: Frames delivered so far (the fan-out numbers them with it).
        self.sequence = 0
        #: Set once the task is journaled (a database store; see replicas/journal.py).
        self.journal: Journal | None = None
        #: Set for streamed runs (see the module doc); ``settled`` once it has run.
        self.settle: Settle | None = None
        self.settled = False
        #: Stores the task once its readers have the run's last frame, for a store that
        #: comes after that frame instead (in memory: ``registry.py``); run once, by
        #: :meth:`end_readers`.
        self.store_end: OnEnd | None = None
        #: The run's final frame is being stored: a cancel can no longer change it.
        self.ending = False
        #: Storing how the run ended failed (the caller was told so).
        self.save_failed = False
        self._interrupted: str | None = None
        #: :meth:`end_readers` has run.
        self._readers_ended = False

    @classmethod
    def revived(cls, task: Task, *, owner: str, coalesce_after: int) -> Self:
        """A live handle on a parked (or, for a mirror, running elsewhere) ``task`` read
        from the store."""
        live = cls(
            task_id=task.id,
            context_id=task.context_id,
            owner=owner,
            user_message=Message(),
            coalesce_after=coalesce_after,
        )
        live.aggregate = TaskAggregate.from_task(task)
        return live

    # --- the run ----------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._producer is not None and not self._producer.done()

    @property
    def idle(self) -> bool:
        """Revived and unused: no run was started on it and nobody subscribes."""
        return self._producer is None and not self._subscribers

    def start(
        self,
        events: AsyncGenerator[AgentEvent, None],
        encoder: StreamEncoding,
        on_end: OnEnd | None = None,
    ) -> None:
        """Drive ``events`` through ``encoder`` in a background task, publishing every
        frame; ``on_end`` runs once the producer has finished, however it finished."""
        self._producer = asyncio.create_task(self._produce(events, encoder, on_end))

    def when_done(self, callback: Callable[[], object]) -> None:
        """``callback`` once the producer :meth:`start`-ed is done, however: also when it
        was cancelled before its first step, which ``on_end`` (run by the producer) is
        not told of."""
        assert self._producer is not None
        self._producer.add_done_callback(lambda _: callback())

    async def _produce(
        self,
        events: AsyncGenerator[AgentEvent, None],
        encoder: StreamEncoding,
        on_end: OnEnd | None,
    ) -> None:
        try:
            try:
                async with contextlib.aclosing(events):
                    since_yield = 0
                    async for event in events:
                        for frame in encoder.encode(event):
                            # The edge of the text deltas a door asked for: they never
                            # end a run (no settling) and go on as they are.
                            if type(frame) is TextDelta:
                                self.publish_text(frame)
                            else:
                                await self._emit(frame)  # type: ignore[arg-type]
                        if encoder.done:
                            if self.settled:
                                await self.end_readers()
                            break
                        since_yield += 1
                        if since_yield == YIELD_EVERY:
                            # An agent that never awaits would otherwise produce its whole
                            # run before any writer (or other request) gets the loop.
                            since_yield = 0
                            await asyncio.sleep(0)
                for frame in encoder.close():
                    await self._emit(frame)
            except asyncio.CancelledError:  # tasks/cancel, the only listener left, shutdown
                if self._interrupted is not None:
                    cut = interrupted_status(self.task_id, self.context_id, self._interrupted)
                    await self._emit(cut)
                else:
                    await self._emit(self.status_update(TaskState.TASK_STATE_CANCELED))
        finally:
            if on_end is not None:
                await on_end(self)

    async def end_readers(self) -> None:
        """The run's last frame is out (settled, nothing more is published): its readers
        end now, and their writers go before what the caller need not wait for (the
        agent's generators closed, the run finished: ``bench/README.md``); then
        :attr:`store_end`, in the same turn of the event loop as those writers. Once: a
        second call returns at once."""
        if self._readers_ended:
            return
        self._readers_ended = True
        for subscriber in self._subscribers:
            subscriber.close()
        await asyncio.sleep(0)
        if self.store_end is not None:
            await self.store_end(self)

    async def wait(self) -> None:
        """Until the producer has finished (shielded: a caller that goes away while
        waiting does not stop the run)."""
        if self._producer is not None:
            await asyncio.shield(self._producer)

    async def _emit(self, frame: StreamFrame) -> None:
        if self.settle is None or self.settled or not ends_run(frame):
            self.publish(frame)
            return
        self.ending = True
        self.aggregate.apply(frame)
        instead = await self.settle(self)
        self.settled = True
        if instead is not None:
            self.aggregate.apply(instead)
            frame = instead
        self._deliver(frame)

    def cancel(self) -> None:
        """Stop the producer; it publishes the ``canceled`` status itself."""
        if self._producer is not None and not self._producer.done() and not self.ending:
            self._producer.cancel()

    def interrupt(self, reason: str) -> None:
        """Stop the producer; it ends the task ``failed`` with an ``interrupted`` error."""
        self._interrupted = reason
        self.cancel()

    def status_update(self, state: TaskState) -> TaskStatusUpdateEvent:
        """A status update of this task to ``state``, stamped now."""
        return TaskStatusUpdateEvent(
            task_id=self.task_id, context_id=self.context_id, status=task_status(state)
        )

    async def cancelled(self) -> Task:
        """Cancel, wait for the end, and return the task as it ended. A parked task
        (nothing runs) just gets its ``canceled`` status; the caller retires it."""
        if self._producer is None:
            self.publish(self.status_update(TaskState.TASK_STATE_CANCELED))
            return self.snapshot()
        self.cancel()
        await self._finished.wait()
        return self.snapshot()

    # --- fan-out ----------------------------------------------------------------------

    def publish(self, frame: StreamFrame) -> None:
        self.aggregate.apply(frame)
        self._deliver(frame)

    def _deliver(self, frame: StreamFrame) -> None:
        self.sequence += 1
        if self.journal is not None:
            self.journal.delivered(self, frame)
        if self.observer is not None and self.observer.watches(self.task_id):
            self.observer.observe(self.task_id, frame)
        for subscriber in self._subscribers:
            subscriber.push(frame)

    def publish_text(self, delta: TextDelta) -> None:
        """:meth:`publish` of ``delta.to_proto()``, built only for whoever needs the
        protobuf (a fan-out, push delivery, a subscriber that did not ask for deltas)."""
        self.aggregate.apply_text(delta)
        self.sequence += 1
        journal, observer = self.journal, self.observer
        if journal is not None:
            journal.delivered(self, delta.to_proto() if journal.wants_frames else None)
        if observer is not None and observer.watches(self.task_id):
            observer.observe(self.task_id, delta.to_proto())
        for subscriber in self._subscribers:
            subscriber.push_text(delta)

    def subscribe(self) -> Subscriber:
        """A new subscriber that gets every frame as protobuf."""
        subscriber = Subscriber(self._coalesce_after)
        self.add_subscriber(subscriber)
        return subscriber

    def add_subscriber(self, subscriber: SubscriberBase[Any]) -> None:
        """``subscriber`` gets every frame from now on (a :class:`TextSubscriber`: text
        deltas as they come)."""
        self._subscribers.append(subscriber)

    def unsubscribe(self, subscriber: SubscriberBase[Any]) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def snapshot(self, history_length: int | None = None) -> Task:
        return self.aggregate.snapshot(history_length)

    def close(self) -> None:
        for subscriber in self._subscribers:
            subscriber.close()
        self._finished.set()


class Lease(Protocol):
    """Where a stored task runs: the replica incarnation and the frames its stored
    snapshot includes (``replicas/tables.py`` writes them)."""

    @property
    def incarnation(self) -> str: ...

    @property
    def seq(self) -> int: ...


class Journal(Protocol):
    """Running tasks kept in the database and shared between replicas, as a live task and
    the registry see it (implemented by ``replicas/journal.py``). Tasks know it only
    through this protocol, so nothing under ``tasks/`` imports the replicas."""

    @property
    def wants_frames(self) -> bool:
        """Every frame is sent on (a fan-out): :meth:`delivered` needs each one."""

    def delivered(self, live: LiveTask, frame: StreamFrame | None) -> None:
        """``frame`` (number ``live.sequence``) went to ``live``'s subscribers; ``None``
        for a text delta when :attr:`wants_frames` is false (its protobuf is not built)."""

    async def release(self, live: LiveTask) -> bool:
        """Store the ended task and drop its lease; False when the lease was lost."""

    async def accept(self, live: LiveTask) -> None:
        """Store ``live`` and take its lease (:class:`TaskBusy` when it already runs)."""

    async def current(self, task_id: str, owner: str) -> tuple[Task, Lease | None] | None:
        """``owner``'s stored task and, while it runs somewhere, its lease."""

    def follows(self, lease: Lease) -> bool:
        """Another replica runs it and this one can follow it (a fan-out is configured)."""

    def mirror(
        self, task: Task, lease: Lease, *, owner: str, coalesce_after: int, on_end: OnEnd
    ) -> LiveTask:
        """A live task here that follows the run on another replica (``on_end`` when it
        stops following)."""

    async def frames_after(self, task_id: str, lease: Lease) -> list[tuple[int, StreamFrame]]:
        """The frames published since the stored snapshot of ``lease``."""

    async def ask(self, lease: Lease, verb: str, task_id: str) -> None:
        """Send ``verb`` (``cancel``, ``push``) to the replica that holds ``lease``."""
