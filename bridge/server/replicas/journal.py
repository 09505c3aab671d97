"""Running tasks written to the database as they change, so a crash loses nothing a caller
could ask about.

With a database task store, a streamed task is journaled from the moment it is accepted:

- :meth:`TaskJournal.accept` stores it (``submitted``) and takes its lease before the
  caller hears of it; a store that fails then is an error to that caller;
- each delivered frame only marks the task dirty (O(1), nothing is written per event) and
  hands the frame to the fan-out, if there is one (replicas);
- every ``interval`` seconds one transaction writes the snapshot of each dirty task with
  the count of frames it includes (batched: nothing per event). A snapshot costs the
  task's size, so the pause after a checkpoint is also at least ``PAUSE_FACTOR`` times as
  long as that checkpoint took: the journal takes a bounded share of the server's time
  however long the streams and however busy the machine;
- :meth:`TaskJournal.release` writes how the run ended and drops the lease before the final
  frame is delivered, so a ``completed`` a caller sees is stored.

A checkpoint that finds the lease gone (another replica declared this one dead and failed
the task) interrupts the run here too. After a crash, the tasks whose leases are left are
failed by :class:`~trpc_bridge.server.replicas.monitor.ReplicaMonitor`.
"""

from __future__ import annotations

import asyncio
import logging
import time

from a2a.types import Task

from trpc_bridge.codecs.encoding import StreamFrame
from trpc_bridge.server.background import cancel_and_wait
from trpc_bridge.server.options import Durability
from trpc_bridge.server.replicas.fanout import FanOut
from trpc_bridge.server.replicas.mirror import MirrorTask
from trpc_bridge.server.replicas.tables import Checkpoint, JournalTables, Replica
from trpc_bridge.server.tasks.interruption import LEASE_LOST
from trpc_bridge.server.tasks.live_task import Lease, LiveTask, OnEnd
from trpc_bridge.server.tasks.store import first_line

logger = logging.getLogger(__name__)

#: The pause after a checkpoint is at least this many times as long as it took.
PAUSE_FACTOR = 9.0


class TaskJournal:
    """The database journal of running tasks: the
    :class:`~trpc_bridge.server.tasks.live_task.Journal` the registry and live tasks use."""

    def __init__(
        self,
        tables: JournalTables,
        *,
        interval: float = Durability.journal_interval,
        fanout: FanOut | None,
    ) -> None:
        self.tables = tables
        self.interval = interval
        self.fanout = fanout
        self.replica = Replica("", "")
        self._dirty: dict[str, LiveTask] = {}
        self._writer: asyncio.Task[None] | None = None
        self._failing = False

    async def start(self, replica: Replica) -> None:
        self.replica = replica
        self._writer = asyncio.create_task(self._write_loop())

    async def stop(self) -> None:
        await cancel_and_wait(self._writer)
        await self._checkpoint()  # what changed since the last tick

    def follows(self, lease: Lease) -> bool:
        """A lease of another replica whose run this one can follow (fan-out configured)."""
        return self.fanout is not None and lease.incarnation != self.replica.incarnation

    async def current(self, task_id: str, owner: str) -> tuple[Task, Lease | None] | None:
        return await self.tables.current(task_id, owner)

    def mirror(
        self, task: Task, lease: Lease, *, owner: str, coalesce_after: int, on_end: OnEnd
    ) -> LiveTask:
        assert self.fanout is not None  # follows() said so
        mirror = MirrorTask.following(
            task, lease, owner=owner, coalesce_after=coalesce_after, fanout=self.fanout
        )
        mirror.follow(on_end)
        return mirror

    async def frames_after(self, task_id: str, lease: Lease) -> list[tuple[int, StreamFrame]]:
        assert self.fanout is not None
        return await self.fanout.history(task_id, lease.seq)

    async def ask(self, lease: Lease, verb: str, task_id: str) -> None:
        assert self.fanout is not None
        await self.fanout.command(lease.incarnation, verb, task_id)

    async def accept(self, live: LiveTask) -> None:
        """Store ``live`` as it stands and take its lease (raises ``TaskBusy`` when it
        already runs, or the store's error)."""
        checkpoint = Checkpoint(live.snapshot(), live.owner, live.sequence)
        await self.tables.claim(checkpoint, self.replica)
        if self.fanout is not None:
            await self.fanout.reset(live.task_id)
        live.journal = self

    @property
    def wants_frames(self) -> bool:
        return self.fanout is not None

    def delivered(self, live: LiveTask, frame: StreamFrame | None) -> None:
        """``frame`` (number ``live.sequence``) went to ``live``'s subscribers (``None``:
        a text delta, and no fan-out to send it)."""
        if not live.settled:
            self._dirty[live.task_id] = live
        if self.fanout is not None and frame is not None:
            self.fanout.publish(live.task_id, live.sequence, frame)

    async def release(self, live: LiveTask) -> bool:
        """Store the ended task and drop its lease; False when the lease was lost."""
        self._dirty.pop(live.task_id, None)
        final = Checkpoint(live.snapshot(), live.owner, live.sequence)
        return await self.tables.release(final, self.replica)

    async def _write_loop(self) -> None:
        pause = self.interval
        while True:
            await asyncio.sleep(pause)
            started = time.perf_counter()
            await self._checkpoint()
            pause = max(self.interval, PAUSE_FACTOR * (time.perf_counter() - started))

    async def _checkpoint(self) -> None:
        if not self._dirty:
            return
        batch, self._dirty = self._dirty, {}
        ready = {t: live for t, live in batch.items() if not live.ending}
        items = [Checkpoint(live.snapshot(), live.owner, live.sequence) for live in ready.values()]
        try:
            lost = await self.tables.checkpoint(items, self.replica)
        except Exception as exc:  # the store is down: keep serving, retry next tick
            if not self._failing:
                logger.error("task checkpoint failed (retrying): %s", first_line(exc))
            self._failing = True
            self._dirty = {**ready, **self._dirty}
            return
        if self._failing:
            logger.warning("task checkpoints written again")
            self._failing = False
        for task_id in lost:
            ready[task_id].interrupt(LEASE_LOST)
