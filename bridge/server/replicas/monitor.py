"""Replicas watching each other through the database: heartbeats, and the tasks of a
replica that died failed by another within a bounded time.

Each replica writes a heartbeat every ``timeout / 3`` seconds (database clock). On the
same tick it looks for replicas whose heartbeat is older than ``timeout`` (default 30 s,
``--replica-timeout``); one of the live replicas wins the row and fails the dead one's
running tasks (``failed``, ``interrupted`` error) in one transaction, then tells their
followers through the fan-out. At start a replica fails what an earlier run of itself
left running (same id: ``host:port``) at once, and with a one-process store (SQLite)
everything left running. Nothing is ever resumed: a restarted replica does not resurrect
a task. A replica that finds its own heartbeat row gone was declared dead (a long pause):
its runs are interrupted here too, since their tasks already read ``failed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from trpc_bridge.codecs.encoding import StreamFrame
from trpc_bridge.server.background import cancel_and_wait
from trpc_bridge.server.options import Durability
from trpc_bridge.server.replicas.fanout import FanOut
from trpc_bridge.server.replicas.tables import JournalTables, Replica
from trpc_bridge.server.tasks.interruption import LEASE_LOST, REPLICA_LOST, RESTARTED
from trpc_bridge.server.tasks.store import first_line

logger = logging.getLogger(__name__)


class ReplicaMonitor:
    def __init__(
        self,
        tables: JournalTables,
        *,
        timeout: float = Durability.replica_timeout,
        single_process: bool,
        fanout: FanOut | None,
        interrupt_all: Callable[[str], None],
    ) -> None:
        self.tables = tables
        self.timeout = timeout
        self.single_process = single_process
        self.fanout = fanout
        self._interrupt_all = interrupt_all
        self.replica = Replica("", "")
        self._loop: asyncio.Task[None] | None = None

    async def start(self, replica: Replica) -> None:
        self.replica = replica
        await self.tables.register(replica)
        frames = await self.tables.fail_orphans(
            replica, everyone=self.single_process, reason=RESTARTED
        )
        if frames:
            logger.warning("%d task(s) left running by an earlier start marked failed", len(frames))
        await self._announce(frames)
        self._loop = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        await cancel_and_wait(self._loop)
        if not self.replica.id:
            return  # never started (the store failed its check): nothing to unregister
        with contextlib.suppress(Exception):  # a store already gone: the row just ages
            await self.tables.unregister(self.replica)

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.timeout / 3)
            try:
                await self.tick()
            except Exception as exc:  # the database is away: try again next tick
                logger.warning("replica heartbeat failed: %s", first_line(exc))

    async def tick(self) -> None:
        if not await self.tables.heartbeat(self.replica):
            logger.error("replica %s was declared dead by another one", self.replica.id)
            self._interrupt_all(LEASE_LOST)
            await self.tables.register(self.replica)
        for dead in await self.tables.stale_replicas(self.timeout):
            reason = REPLICA_LOST.format(replica=dead.id)
            frames = await self.tables.reap(dead, self.timeout, reason)
            if frames:
                logger.warning("replica %s is dead: %d task(s) failed", dead.id, len(frames))
            await self._announce(frames)

    async def _announce(self, frames: list[StreamFrame]) -> None:
        if self.fanout is not None:
            for frame in frames:
                await self.fanout.ended(frame)
