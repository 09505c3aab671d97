"""Live tasks and their fan-out, plus the store that keeps finished ones.

A :class:`LiveTask` is one running agent invocation. It owns its lifecycle: :meth:`start`
runs one producer that encodes the run's events and :meth:`publish`-es each frame to the
incremental aggregate and to every subscriber (the requesting stream and any
``tasks/resubscribe``); :meth:`cancel` stops the producer, which then publishes
``canceled`` itself; :meth:`wait` waits for the end; :meth:`snapshot` is the task as it
stands. When the run ends the registry saves the aggregated ``Task`` to the task store
(a2a-sdk's in-memory or SQL store, scoped by owner) and forgets the live task.

A run that ends waiting for the caller (input or auth required) is saved and forgotten
the same way: the task is *parked*. A follow-up message with its ``taskId``, a
subscription or a cancel revives it from the store (:meth:`TaskRegistry.revive`) as a
live task without a producer, so parked tasks cost no memory while nobody uses them and
survive a restart with a database store.

A streamed task is *settled* before the frame that ends its run (a terminal or
input-required status) reaches anyone: the task is stored first, so a ``completed`` a
caller sees is a stored ``completed``; a store that fails turns that frame into a
``failed`` status that says so, and the task is kept as the caller saw it until the store
takes it (:mod:`~trpc_bridge.server.unsaved`): every read agrees with that ``failed``
meanwhile. With a database store the task is also journaled while it runs
(:mod:`~trpc_bridge.server.task_journal`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING

from a2a.server.tasks import TaskStore
from a2a.types import (
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    InternalError,
    InvalidParamsError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from trpc_bridge.codecs.encoding import StreamEncoding, StreamFrame
from trpc_bridge.codecs.trpc_encode import task_status
from trpc_bridge.events import AgentEvent
from trpc_bridge.names import new_id, shown_id
from trpc_bridge.server.aggregate import TaskAggregate
from trpc_bridge.server.interruption import LEASE_LOST, interrupted_status
from trpc_bridge.server.states import INTERRUPTED_STATES, TERMINAL_STATES
from trpc_bridge.server.subscriber import Subscriber
from trpc_bridge.server.task_store import first_line, owner_context
from trpc_bridge.server.unsaved import UnsavedTasks

if TYPE_CHECKING:
    from trpc_bridge.server.task_journal import TaskJournal
    from trpc_bridge.server.task_tables import Lease

logger = logging.getLogger(__name__)

#: Events a producer handles before it lets the event loop run others: writers then send
#: what is buffered in batches of about this size (one write each), other requests are
#: served in between, and the agent's pace is not otherwise affected.
YIELD_EVERY = 64

#: Called once when a producer has finished (the task may not be terminal).
OnEnd = Callable[["LiveTask"], Awaitable[None]]
#: Sees every frame of every live task (push delivery): ``(task_id, frame)``.
FrameObserver = Callable[[str, StreamFrame], None]
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
        self._subscribers: list[Subscriber] = []
        self._coalesce_after = coalesce_after
        self.observer: FrameObserver | None = None
        #: Frames delivered so far (the fan-out numbers them with it).
        self.sequence = 0
        #: Set once the task is journaled (a database store; see task_journal).
        self.journal: TaskJournal | None = None
        #: Set for streamed runs (see the module doc); ``settled`` once it has run.
        self.settle: Settle | None = None
        self.settled = False
        #: The run's final frame is being stored: a cancel can no longer change it.
        self.ending = False
        #: Storing how the run ended failed (the caller was told so).
        self.save_failed = False
        self._interrupted: str | None = None

    @classmethod
    def revived(cls, task: Task, *, owner: str, coalesce_after: int) -> LiveTask:
        """A live handle on a parked ``task`` read from the store."""
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
                            await self._emit(frame)
                        if encoder.done:
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
        if self.observer is not None:
            self.observer(self.task_id, frame)
        for subscriber in self._subscribers:
            subscriber.push(frame)

    def subscribe(self) -> Subscriber:
        subscriber = Subscriber(self._coalesce_after)
        self._subscribers.append(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
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


class TaskRegistry:
    """Live tasks by id, and the task store behind them."""

    def __init__(self, store: TaskStore, journal: TaskJournal | None = None) -> None:
        self.store = store
        #: Running tasks are written to the store as they change (a database store).
        self.journal = journal
        self._live: dict[str, LiveTask] = {}
        #: Given to every live task (push delivery); None: nobody observes.
        self.observer: FrameObserver | None = None
        #: The server is shutting down: no new run is accepted.
        self.closing = False
        #: Runs whose end could not be stored, as their callers were told they ended.
        self.unsaved = UnsavedTasks(self._write_unsaved)

    def add(self, live: LiveTask) -> None:
        live.observer = self.observer
        self._live[live.task_id] = live

    def live(self, task_id: str, owner: str) -> LiveTask | None:
        """The running task ``task_id`` if ``owner`` created it."""
        live = self._live.get(task_id)
        return live if live is not None and live.owner == owner else None

    async def stored(self, task_id: str, owner: str) -> Task | None:
        """``owner``'s task as stored (or as its caller was told, when that is unsaved)."""
        told = self.unsaved.get(task_id, owner)
        return told if told is not None else await self.store.get(task_id, owner_context(owner))

    async def list(self, params: ListTasksRequest, owner: str) -> ListTasksResponse:
        """A page of ``owner``'s stored tasks (the store's errors as it raises them)."""
        page = await self.store.list(params, owner_context(owner))
        return self.unsaved.overlay(page, params, owner)

    async def revive(self, task_id: str, owner: str, *, coalesce_after: int) -> LiveTask | Task:
        """``task_id`` as a live task when it runs (here, or followed from the replica
        that runs it) or is parked (revived from the store); the stored ``Task`` when it
        is finished. Unknown to ``owner``: TaskNotFoundError."""
        live = self.live(task_id, owner)
        if live is not None:
            return live
        told = self.unsaved.get(task_id, owner)
        if told is not None:
            return told
        found = await self._current(task_id, owner)
        if found is None:
            raise TaskNotFoundError(message=f"Task {shown_id(task_id)} not found")
        task, lease = found
        if lease is not None and self.journal is not None and self.journal.follows(lease):
            from trpc_bridge.server.task_mirror import MirrorTask

            assert self.journal.fanout is not None
            mirror = MirrorTask(
                task, lease, owner=owner, coalesce_after=coalesce_after, fanout=self.journal.fanout
            )
            self._live[task_id] = mirror
            mirror.follow(self._unfollow)
            return mirror
        if task.status.state not in INTERRUPTED_STATES:
            return task
        live = LiveTask.revived(task, owner=owner, coalesce_after=coalesce_after)
        self.add(live)
        return live

    async def _current(self, task_id: str, owner: str) -> tuple[Task, Lease | None] | None:
        if self.journal is not None:
            return await self.journal.tables.current(task_id, owner)
        task = await self.stored(task_id, owner)
        return None if task is None else (task, None)

    async def current_task(self, task_id: str, owner: str) -> Task | None:
        """``owner``'s task as it stands, wherever it runs: live here, stored +
        the frames published since (another replica runs it), or stored."""
        live = self.live(task_id, owner)
        if live is not None:
            return live.snapshot()
        told = self.unsaved.get(task_id, owner)
        if told is not None:
            return told
        found = await self._current(task_id, owner)
        if found is None:
            return None
        task, lease = found
        if lease is None or self.journal is None or not self.journal.follows(lease):
            return task
        assert self.journal.fanout is not None
        later = await self.journal.fanout.history(task_id, lease.seq)
        if not later:
            return task
        aggregate = TaskAggregate.from_task(task)
        for _, frame in later:
            aggregate.apply(frame)
        return aggregate.snapshot()

    async def ask_runner(self, task_id: str, owner: str, verb: str) -> bool:
        """Send ``verb`` to the replica that runs ``owner``'s task; False when it runs
        nowhere else."""
        if self.journal is None or self.journal.fanout is None:
            return False
        found = await self._current(task_id, owner)
        if found is None or found[1] is None or not self.journal.follows(found[1]):
            return False
        await self.journal.fanout.command(found[1].incarnation, verb, task_id)
        return True

    async def on_command(self, verb: str, task_id: str) -> None:
        """A command from another replica about a task that runs here (the sender
        checked who owns it)."""
        live = self._live.get(task_id)
        if live is not None and not live.remote and verb == "cancel":
            live.cancel()

    async def _unfollow(self, live: LiveTask) -> None:
        if self._live.get(live.task_id) is live:
            del self._live[live.task_id]
        live.close()

    async def resume(
        self, task_id: str, owner: str, *, context_id: str, coalesce_after: int
    ) -> LiveTask:
        """The parked task a follow-up message continues; a precise error when the task
        is unknown, finished, still running or in another context."""
        found = await self.revive(task_id, owner, coalesce_after=coalesce_after)
        if isinstance(found, Task):
            raise UnsupportedOperationError(
                message=f"Task {shown_id(task_id)} is in a terminal state"
            )
        if found.running:
            self.release(found)
            raise UnsupportedOperationError(message=f"Task {shown_id(task_id)} is still running")
        if context_id and context_id != found.context_id:
            raise InvalidParamsError(
                message=f"contextId {shown_id(context_id)} does not match task "
                f"{shown_id(task_id)}'s context"
            )
        return found

    async def accept(self, live: LiveTask) -> None:
        """``live`` runs as a task its caller knows by id: settled before its last frame,
        journaled from now on with a database store. A store that cannot take it is an
        error to the caller, before the run starts."""
        live.settle = self._settle
        if self.journal is None:
            return
        from trpc_bridge.server.task_tables import TaskBusy

        try:
            await self.journal.accept(live)
        except TaskBusy:
            raise UnsupportedOperationError(
                message=f"Task {shown_id(live.task_id)} is still running"
            ) from None
        except Exception as exc:
            logger.error("storing task %s failed: %s", live.task_id, first_line(exc))
            raise InternalError(message="the task could not be stored") from exc

    async def _settle(self, live: LiveTask) -> StreamFrame | None:
        try:
            if live.journal is not None:
                if not await live.journal.release(live):
                    return interrupted_status(live.task_id, live.context_id, LEASE_LOST)
            else:
                await self.store.save(live.snapshot(), owner_context(live.owner))
        except Exception as exc:  # a broken store: the caller must not see a "completed"
            logger.error("saving task %s failed: %s", live.task_id, first_line(exc))
            live.save_failed = True
            return self._unsaved(live)
        return None

    async def _write_unsaved(self, task: Task, owner: str, sequence: int) -> None:
        """Store how an unsaved run ended (see :mod:`~trpc_bridge.server.unsaved`): with
        its lease dropped when this replica still holds it, over whatever another
        replica wrote otherwise (the caller was told this)."""
        if self.journal is not None:
            from trpc_bridge.server.task_tables import Checkpoint

            final = Checkpoint(task, owner, sequence)
            if await self.journal.tables.release(final, self.journal.replica):
                return
        await self.store.save(task, owner_context(owner))

    @staticmethod
    def _unsaved(live: LiveTask) -> TaskStatusUpdateEvent:
        message = Message(
            message_id=new_id("msg"),
            task_id=live.task_id,
            context_id=live.context_id,
            role=Role.ROLE_AGENT,
            parts=[Part(text="the task could not be saved: the task store failed")],
        )
        return TaskStatusUpdateEvent(
            task_id=live.task_id,
            context_id=live.context_id,
            status=task_status(TaskState.TASK_STATE_FAILED, message),
        )

    def running(self) -> list[LiveTask]:
        """The runs of this replica."""
        return [live for live in self._live.values() if live.running and not live.remote]

    def interrupt_all(self, reason: str) -> None:
        """Interrupt every run here and stop following the others."""
        for live in list(self._live.values()):
            if live.running:
                live.interrupt(reason)

    def release(self, live: LiveTask) -> None:
        """Forget a revived task nobody uses any more (no run, no subscriber): it is
        unchanged in the store. A followed remote run nobody here watches is let go."""
        if live.remote and live.subscriber_count == 0:
            live.interrupt("")
        elif live.idle and self._live.get(live.task_id) is live:
            del self._live[live.task_id]

    async def finish(self, live: LiveTask) -> None:
        """A streamed run ended: store how it ended (unless it was settled), then end
        the live task."""
        if not live.settled:
            if not live.aggregate.terminal and not live.aggregate.interrupted:
                # trpc's unstructured error ends the stream without a terminal status;
                # the stored task still has to say how it ended.
                live.aggregate.status.CopyFrom(task_status(TaskState.TASK_STATE_FAILED))
            live.ending = live.settled = True
            await self._settle(live)  # the stream has ended: nothing left to tell
        if live.save_failed:  # before it stops being live: no read sees the stale row
            self.unsaved.add(live.snapshot(), live.owner, live.sequence)
        self._live.pop(live.task_id, None)
        live.close()

    async def retire(self, live: LiveTask, final: Task | None) -> None:
        """Save ``final`` (when given) for ``live``'s owner, then end the live task; a
        save that fails raises ``InternalError`` (the caller must not think it stored)."""
        try:
            if final is not None:
                await self.store.save(final, owner_context(live.owner))
        except Exception as exc:
            logger.error("saving task %s failed: %s", live.task_id, first_line(exc))
            raise InternalError(message="the task could not be saved") from exc
        finally:
            self._live.pop(live.task_id, None)
            live.close()

    def __len__(self) -> int:
        return len(self._live)
