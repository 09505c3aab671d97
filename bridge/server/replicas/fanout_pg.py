"""Fan-out between replicas through PostgreSQL: frames in the ``bridge_events`` table,
``LISTEN/NOTIFY`` to wake the replicas that follow them.

The publishing replica batches what its streams delivered since the last write into one
transaction (one multi-row ``INSERT`` plus one ``pg_notify('bridge_events', task_id)`` per
task), so under load many frames share a round trip and an idle stream's frame leaves at
once. Each replica keeps one listening connection (asyncpg) for ``bridge_events`` and
``bridge_control`` (commands: ``<incarnation> <verb> <task_id>``); a follower woken for
its task reads the rows after the last ``seq`` it has. A notification's payload is
``<task_id> <stamp>``, the batch's publication time (Unix seconds): a follower's fan-out
lag is measured from it. The table, not the notification,
is the truth: a notification lost during a reconnection only delays a follower by
:data:`~trpc_bridge.server.replicas.fanout.POLL` seconds. Frames of finished runs are deleted
:data:`~trpc_bridge.server.replicas.fanout.KEEP_FINISHED` seconds later.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
from sqlalchemy import text

from trpc_bridge.codecs.encoding import StreamFrame
from trpc_bridge.server.background import cancel_and_wait
from trpc_bridge.server.replicas.fanout import (
    KEEP_FINISHED,
    Batches,
    OnCommand,
    Wakeups,
    dispatch,
)
from trpc_bridge.server.replicas.frames import pack, unpack
from trpc_bridge.server.replicas.tables import JournalTables
from trpc_bridge.server.tasks.store import first_line
from trpc_bridge.telemetry.metrics import BridgeMetrics

logger = logging.getLogger(__name__)

EVENTS_CHANNEL = "bridge_events"
CONTROL_CHANNEL = "bridge_control"
#: Seconds between two purges of finished runs' frames.
_PURGE_EVERY = 30.0


class PgFanOut:
    def __init__(self, tables: JournalTables) -> None:
        self.tables = tables
        self.on_command: OnCommand | None = None
        self.metrics: BridgeMetrics | None = None
        self._incarnation = ""
        self._batches = Batches(self._write)
        self._writer: asyncio.Task[None] | None = None
        self._listener: asyncpg.Connection | None = None
        self._wakeups = Wakeups()
        self._commands: set[asyncio.Future[None]] = set()

    async def start(self, incarnation: str) -> None:
        self._incarnation = incarnation
        await self._listen()
        self._writer = asyncio.create_task(
            self._batches.run(idle_every=_PURGE_EVERY, on_idle=self._purge)
        )

    async def _listen(self) -> None:
        url = self.tables.engine.url.set(drivername="postgresql")
        dsn = url.render_as_string(hide_password=False)
        self._listener = await asyncpg.connect(dsn)
        await self._listener.add_listener(EVENTS_CHANNEL, self._on_event)
        await self._listener.add_listener(CONTROL_CHANNEL, self._on_control)

    async def ping(self) -> None:
        """The listening connection answers; one lost with the server (a restart) is made
        again, its notifications missed meanwhile covered by the followers' polling."""
        if self._listener is None or self._listener.is_closed():
            await self._listen()
        assert self._listener is not None
        await self._listener.fetchval("SELECT 1")

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.flush(), 5)
        await cancel_and_wait(self._writer)
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.close()

    # --- publishing -----------------------------------------------------------------

    def publish(self, task_id: str, seq: int, frame: StreamFrame) -> None:
        self._batches.add((task_id, seq, pack(frame)))

    async def flush(self) -> None:
        await self._batches.flush()

    async def _purge(self) -> None:
        with contextlib.suppress(Exception):
            await self.tables.purge_events(KEEP_FINISHED)

    async def _write(self, batch: list[tuple[str, int, bytes]], published: float) -> None:
        tasks = dict.fromkeys(task_id for task_id, _, _ in batch)
        payloads = [_payload(task_id, published) for task_id in tasks]
        for attempt in range(3):
            try:
                await self.tables.append_events(batch, notify=(EVENTS_CHANNEL, payloads))
                return
            except Exception as exc:  # followers poll the table: retry, then give up
                logger.warning("publishing %d frame(s) failed: %s", len(batch), first_line(exc))
                await asyncio.sleep(0.1 * (attempt + 1))

    async def reset(self, task_id: str) -> None:
        """Nothing to do: the journal's claim deletes the earlier run's rows."""

    async def ended(self, frame: StreamFrame) -> None:
        payload = _payload(frame.task_id, time.time())
        await self.tables.append_final(frame, notify=(EVENTS_CHANNEL, payload))

    # --- following --------------------------------------------------------------------

    async def history(self, task_id: str, after: int) -> list[tuple[int, StreamFrame]]:
        return [(seq, unpack(data)) for seq, data in await self.tables.events_after(task_id, after)]

    def follow(self, task_id: str, after: int) -> AsyncIterator[tuple[int, StreamFrame]]:
        return self._wakeups.follow(task_id, after, self.history, self._lag)

    def _on_event(self, _: Any, __: int, ___: str, payload: str) -> None:
        task_id, _, stamp = payload.rpartition(" ")
        try:
            published = float(stamp)
        except ValueError:  # no stamp: a task id alone
            task_id, published = payload, 0.0
        self._wakeups.wake(task_id, published)

    def _lag(self, seconds: float) -> None:
        if self.metrics is not None:
            self.metrics.fanout_lag(seconds, "postgresql")

    # --- commands ---------------------------------------------------------------------

    async def command(self, incarnation: str, verb: str, task_id: str) -> None:
        async with self.tables.engine.begin() as connection:
            payload = f"{incarnation} {verb} {task_id}"
            await connection.execute(
                text("SELECT pg_notify(:channel, :payload)"),
                {"channel": CONTROL_CHANNEL, "payload": payload},
            )

    def _on_control(self, _: Any, __: int, ___: str, payload: str) -> None:
        incarnation, verb, task_id = ([*payload.split(" ", 2), "", ""])[:3]
        if incarnation == self._incarnation:
            running = asyncio.ensure_future(dispatch(self.on_command, verb, task_id))
            self._commands.add(running)
            running.add_done_callback(self._commands.discard)


def _payload(task_id: str, published: float) -> str:
    """A ``bridge_events`` notification: the task, and when its batch was published."""
    return f"{task_id} {published:.6f}"
