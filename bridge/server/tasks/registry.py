"""Live tasks by id, plus the store that keeps finished ones.

When a run ends the registry saves the aggregated ``Task`` to the task store (a2a-sdk's
in-memory or SQL store, scoped by owner) and forgets the live task
(:mod:`~trpc_bridge.server.tasks.live_task`).

A run that ends waiting for the caller (input or auth required) is saved and forgotten
the same way: the task is *parked*. A follow-up message with its ``taskId``, a
subscription or a cancel revives it from the store (:meth:`TaskRegistry.revive`) as a
live task without a producer, so parked tasks cost no memory while nobody uses them and
survive a restart with a database store.

A streamed task is *settled* before the frame that ends its run (a terminal or
input-required status) reaches anyone: the task is stored first, so a ``completed`` a
caller sees is a stored ``completed``. In memory, where a save cannot fail, the save
follows the frame instead, in the same turn of the event loop as the writers that send
it: the caller's response ends first, and no request that follows it is served before
the task is stored (until then the task is still live, and reads find it there); so is
a JSON-RPC 0.3 ``message/send`` task, once its answer has left
(``server/a2a/after_answer.py``). A database store that fails turns that frame into a
``failed`` status that says so, and the task is kept as the caller saw it until the
store takes it (:mod:`~trpc_bridge.server.tasks.unsaved`): every read agrees with that
``failed`` meanwhile. With a database store the task is also journaled while it runs,
through the :class:`~trpc_bridge.server.tasks.live_task.Journal` protocol
(``replicas/journal.py``).
"""

from __future__ import annotations

import logging

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

from trpc_bridge.codecs.encoding import StreamFrame
from trpc_bridge.codecs.trpc.stream_frames import task_status
from trpc_bridge.names import new_id, shown_id
from trpc_bridge.server.tasks.interruption import LEASE_LOST, interrupted_status
from trpc_bridge.server.tasks.live_task import FrameObserver, Journal, Lease, LiveTask
from trpc_bridge.server.tasks.memory_store import BoundedMemoryTaskStore
from trpc_bridge.server.tasks.states import INTERRUPTED_STATES
from trpc_bridge.server.tasks.store import TaskBusy, first_line, owner_context
from trpc_bridge.server.tasks.task_aggregate import TaskAggregate
from trpc_bridge.server.tasks.unsaved import UnsavedTasks

logger = logging.getLogger(__name__)


class TaskRegistry:
    """Live tasks by id, and the task store behind them."""

    def __init__(self, store: TaskStore, journal: Journal | None = None) -> None:
        self.store = store
        #: Running tasks are written to the store as they change (a database store).
        self.journal = journal
        self._live: dict[str, LiveTask] = {}
        #: Given to every live task (push delivery); None: nobody observes.
        self.observer: FrameObserver | None = None
        #: The server is shutting down: no new run is accepted.
        self.closing = False
        #: Runs whose end could not be stored, as their callers were told they ended.
        self.unsaved = UnsavedTasks()
        #: A streamed run's end is stored after its final frame has left, not before (see
        #: the module doc): the store keeps tasks in this process, where a save cannot
        #: fail, and nothing is journaled.
        self._store_after_end = journal is None and isinstance(store, BoundedMemoryTaskStore)

    @property
    def stores_after_end(self) -> bool:
        """A run's end may be stored after its caller has it (the store is in this
        process: a save cannot fail, and nothing is journaled)."""
        return self._store_after_end

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

    async def list_tasks(self, params: ListTasksRequest, owner: str) -> ListTasksResponse:
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
            mirror = self.journal.mirror(
                task, lease, owner=owner, coalesce_after=coalesce_after, on_end=self._unfollow
            )
            self._live[task_id] = mirror
            return mirror
        if task.status.state not in INTERRUPTED_STATES:
            return task
        live = LiveTask.revived(task, owner=owner, coalesce_after=coalesce_after)
        self.add(live)
        return live

    async def _current(self, task_id: str, owner: str) -> tuple[Task, Lease | None] | None:
        if self.journal is not None:
            return await self.journal.current(task_id, owner)
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
        later = await self.journal.frames_after(task_id, lease)
        if not later:
            return task
        aggregate = TaskAggregate.from_task(task)
        for _, frame in later:
            aggregate.apply(frame)
        return aggregate.snapshot()

    async def ask_runner(self, task_id: str, owner: str, verb: str) -> bool:
        """Send ``verb`` to the replica that runs ``owner``'s task; False when it runs
        nowhere else."""
        if self.journal is None:
            return False
        found = await self._current(task_id, owner)
        if found is None or found[1] is None or not self.journal.follows(found[1]):
            return False
        await self.journal.ask(found[1], verb, task_id)
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
        if self._store_after_end:
            live.store_end = self._save
        if self.journal is None:
            return
        try:
            await self.journal.accept(live)
        except TaskBusy:
            raise UnsupportedOperationError(
                message=f"Task {live.task_id} is still running"
            ) from None
        except Exception as exc:
            logger.error("storing task %s failed: %s", live.task_id, first_line(exc))
            raise InternalError(message="the task could not be stored") from exc

    async def _settle(self, live: LiveTask) -> StreamFrame | None:
        if self._store_after_end:
            return None  # stored once its readers have this frame (``LiveTask.store_end``)
        try:
            if live.journal is not None:
                if not await live.journal.release(live):
                    return interrupted_status(live.task_id, live.context_id, LEASE_LOST)
            else:
                await self._save(live)
        except Exception as exc:  # a broken store: the caller must not see a "completed"
            logger.error("saving task %s failed: %s", live.task_id, first_line(exc))
            live.save_failed = True
            return self._unsaved(live)
        return None

    async def _write_unsaved(self, live: LiveTask) -> None:
        """Store how an unsaved run ended (see :mod:`~trpc_bridge.server.tasks.unsaved`):
        with its lease dropped when this replica still holds it, over whatever another
        replica wrote otherwise (the caller was told this)."""
        if live.journal is not None and await live.journal.release(live):
            return
        await self._save(live)

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
        try:
            await live.end_readers()  # which stores it, when that comes after its end
            if live.save_failed:  # before it stops being live: no read sees the stale row
                self.unsaved.add(live.snapshot(), live.owner, lambda: self._write_unsaved(live))
        finally:
            self._live.pop(live.task_id, None)
            live.close()

    async def _save(self, live: LiveTask) -> None:
        """Store ``live`` as it stands for its owner: when it settles, when an unsaved end
        is written again, or (in memory) right after its readers' writers sent its last
        frame, in the same turn of the event loop."""
        await self.store.save(live.snapshot(), owner_context(live.owner))

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
