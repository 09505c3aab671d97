"""The bridge's own tables beside a2a-sdk's ``tasks`` table, and every statement on them.

- ``bridge_replicas``: one row per running server process (replica): its id, the
  incarnation (a new one at each start) and its last heartbeat, in the database's clock.
- ``bridge_running``: one row per task that runs somewhere: who owns it, which replica
  incarnation runs it, and how many frames the task row stored in ``tasks`` includes
  (``seq``). The row is the run's lease: a replica writes a task only while its row
  names that replica's incarnation, so a replica declared dead cannot overwrite the
  ``failed`` status another one gave its tasks (no resurrection).
- ``bridge_events``: the frames of running tasks, for the PostgreSQL fan-out
  (:mod:`~trpc_bridge.server.replicas.fanout_pg`): ``(task_id, seq)`` → serialized frame.

The task row and the lease change in one transaction, so a reader that gets both in one
statement (:meth:`JournalTables.current`) has a snapshot and the exact frame count it
covers: snapshot + frames after ``seq`` is the task as it stands, nothing twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from a2a.types import Task
from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Float,
    LargeBinary,
    MetaData,
    String,
    Table,
    and_,
    delete,
    func,
    insert,
    literal_column,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from trpc_bridge.codecs.encoding import StreamFrame
from trpc_bridge.names import ID_LENGTH
from trpc_bridge.server.replicas.frames import pack
from trpc_bridge.server.tasks.interruption import interrupted_status
from trpc_bridge.server.tasks.states import TERMINAL_STATES
from trpc_bridge.server.tasks.store import TaskBusy, WideIdTaskStore
from trpc_bridge.telemetry.metrics import store_timer

_metadata = MetaData()

replicas = Table(
    "bridge_replicas",
    _metadata,
    Column("replica_id", String(ID_LENGTH), primary_key=True),
    Column("incarnation", String(64), nullable=False),
    Column("heartbeat_at", Float, nullable=False),
)
running = Table(
    "bridge_running",
    _metadata,
    Column("task_id", String(ID_LENGTH), primary_key=True),
    Column("owner", String(ID_LENGTH), nullable=False),
    Column("replica_id", String(ID_LENGTH), nullable=False, index=True),
    Column("incarnation", String(64), nullable=False),
    Column("seq", BigInteger, nullable=False),
)
events = Table(
    "bridge_events",
    _metadata,
    Column("task_id", String(ID_LENGTH), primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("frame", LargeBinary, nullable=False),
    Column("created_at", Float, nullable=False, index=True),
)

#: Seconds since the epoch in the database's clock: replicas on several machines compare
#: heartbeats without trusting each other's clocks.
_NOW = {
    "postgresql": "extract(epoch from clock_timestamp())",
    "sqlite": "((julianday('now') - 2440587.5) * 86400.0)",
}


@dataclass(frozen=True)
class Replica:
    """This process among the replicas: a stable id (host:port) and this start's token."""

    id: str
    incarnation: str


@dataclass(frozen=True)
class Lease:
    """Where a task runs, and the frames its stored snapshot includes."""

    replica_id: str
    incarnation: str
    seq: int


@dataclass(frozen=True)
class Checkpoint:
    task: Task
    owner: str
    seq: int


class JournalTables:
    """The statements of the journal, the replica monitor and the PostgreSQL fan-out."""

    def __init__(self, store: WideIdTaskStore) -> None:
        self.store = store
        self.engine = store.engine
        self.dialect = store.engine.dialect.name
        self._sessions = store.async_session_maker

    def now(self) -> ColumnElement[float]:
        return literal_column(_NOW.get(self.dialect, _NOW["postgresql"]))

    async def create(self) -> None:
        await self.store.initialize()
        async with self.engine.begin() as connection:
            await connection.run_sync(_metadata.create_all)

    # --- the journal -------------------------------------------------------------------

    async def claim(self, checkpoint: Checkpoint, replica: Replica) -> None:
        """Store an accepted task and take its lease; :class:`TaskBusy` when it runs."""
        row = {
            "task_id": checkpoint.task.id,
            "owner": checkpoint.owner,
            "replica_id": replica.id,
            "incarnation": replica.incarnation,
            "seq": checkpoint.seq,
        }
        # A task that already runs is the store's answer, not its failure.
        busy = (IntegrityError,)
        try:
            with store_timer(self.store.metrics, "claim", busy):
                async with self._sessions.begin() as session:
                    await session.execute(insert(running).values(**row))
                    await session.execute(delete(events).where(events.c.task_id == row["task_id"]))
                    await session.merge(self.store.model_of(checkpoint.task, checkpoint.owner))
        except IntegrityError as exc:
            raise TaskBusy(checkpoint.task.id) from exc

    async def checkpoint(self, batch: Sequence[Checkpoint], replica: Replica) -> list[str]:
        """Store each task whose lease this replica still holds; the ids it lost."""
        lost: list[str] = []
        with store_timer(self.store.metrics, "checkpoint"):
            async with self._sessions.begin() as session:
                for item in batch:
                    if await self._renew(session, item, replica):
                        await session.merge(self.store.model_of(item.task, item.owner))
                    else:
                        lost.append(item.task.id)
        return lost

    async def _renew(self, session: AsyncSession, item: Checkpoint, replica: Replica) -> bool:
        result = await session.execute(
            update(running)
            .where(_leased(item.task.id, replica))
            .values(seq=item.seq)
            .execution_options(synchronize_session=False)
        )
        return bool(getattr(result, "rowcount", 0))

    async def release(self, final: Checkpoint, replica: Replica) -> bool:
        """Store how the task ended and drop its lease; False (nothing written) when the
        lease was lost: another replica has already ended the task."""
        with store_timer(self.store.metrics, "release"):
            async with self._sessions.begin() as session:
                deleted = delete(running).where(_leased(final.task.id, replica))
                result = await session.execute(deleted)
                if not getattr(result, "rowcount", 0):
                    return False
                await session.merge(self.store.model_of(final.task, final.owner))
        return True

    async def current(self, task_id: str, owner: str) -> tuple[Task, Lease | None] | None:
        """The stored task and, while it runs, its lease: one statement, so the snapshot
        and its frame count agree."""
        model = self.store.task_model
        statement = (
            select(model, running.c.replica_id, running.c.incarnation, running.c.seq)
            .outerjoin(running, running.c.task_id == model.id)
            .where(and_(model.id == task_id, model.owner == owner))
        )
        async with self._sessions() as session:
            row = (await session.execute(statement)).first()
        if row is None:
            return None
        task = self.store.task_of(row[0])
        lease = None if row[1] is None else Lease(row[1], row[2], int(row[3]))
        return task, lease

    # --- replicas ------------------------------------------------------------------------

    async def register(self, replica: Replica) -> None:
        async with self._sessions.begin() as session:
            await session.execute(delete(replicas).where(replicas.c.replica_id == replica.id))
            await session.execute(
                insert(replicas).values(
                    replica_id=replica.id, incarnation=replica.incarnation, heartbeat_at=self.now()
                )
            )

    async def heartbeat(self, replica: Replica) -> bool:
        """Renew this replica's heartbeat; False when another replica declared it dead."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(replicas)
                .where(
                    and_(
                        replicas.c.replica_id == replica.id,
                        replicas.c.incarnation == replica.incarnation,
                    )
                )
                .values(heartbeat_at=self.now())
            )
        return bool(getattr(result, "rowcount", 0))

    async def unregister(self, replica: Replica) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                delete(replicas).where(
                    and_(
                        replicas.c.replica_id == replica.id,
                        replicas.c.incarnation == replica.incarnation,
                    )
                )
            )

    async def stale_replicas(self, timeout: float) -> list[Replica]:
        statement = select(replicas.c.replica_id, replicas.c.incarnation).where(
            replicas.c.heartbeat_at < self.now() - timeout
        )
        async with self._sessions() as session:
            return [Replica(r[0], r[1]) for r in await session.execute(statement)]

    async def reap(self, dead: Replica, timeout: float, reason: str) -> list[StreamFrame]:
        """Declare ``dead`` dead (when its heartbeat is still stale and nobody did it first)
        and fail its tasks; the final frames to tell their subscribers."""
        async with self._sessions.begin() as session:
            gone = await session.execute(
                delete(replicas).where(
                    and_(
                        replicas.c.replica_id == dead.id,
                        replicas.c.incarnation == dead.incarnation,
                        replicas.c.heartbeat_at < self.now() - timeout,
                    )
                )
            )
            if not getattr(gone, "rowcount", 0):
                return []
            return await self._fail(session, running.c.incarnation == dead.incarnation, reason)

    async def fail_orphans(
        self, replica: Replica, *, everyone: bool, reason: str
    ) -> list[StreamFrame]:
        """At start: fail the tasks an earlier run of this replica (or, for a one-process
        store, of any replica) left running."""
        where = running.c.incarnation != replica.incarnation
        if not everyone:
            where = and_(where, running.c.replica_id == replica.id)
        async with self._sessions.begin() as session:
            return await self._fail(session, where, reason)

    async def _fail(
        self, session: AsyncSession, where: ColumnElement[bool], reason: str
    ) -> list[StreamFrame]:
        statement = select(running.c.task_id, running.c.owner).where(where)
        leases = [(str(t), str(o)) for t, o in (await session.execute(statement)).all()]
        frames: list[StreamFrame] = []
        model = self.store.task_model
        for task_id, owner in leases:
            stored = await session.get(model, task_id)
            if stored is None:
                continue
            task = self.store.task_of(stored)
            if task.status.state in TERMINAL_STATES:
                continue
            frame = interrupted_status(task.id, task.context_id, reason)
            task.status.CopyFrom(frame.status)
            task.metadata.MergeFrom(frame.metadata)
            await session.merge(self.store.model_of(task, owner))
            frames.append(frame)
        await session.execute(delete(running).where(where))
        return frames

    # --- events (PostgreSQL fan-out) -------------------------------------------------------

    async def append_events(
        self, rows: Sequence[tuple[str, int, bytes]], *, notify: tuple[str, list[str]]
    ) -> None:
        """Insert frames and, in the same transaction, notify channel ``notify[0]`` with
        each payload of ``notify[1]`` (one per task)."""
        channel, payloads = notify
        async with self._sessions.begin() as session:
            await session.execute(
                insert(events),
                [{"task_id": t, "seq": s, "frame": f, "created_at": 0.0} for t, s, f in rows],
            )
            await _notify(session, channel, payloads)

    async def append_final(self, frame: StreamFrame, *, notify: tuple[str, str]) -> None:
        """Add ``frame`` after the last one of its task (another replica's run ended) and
        notify channel ``notify[0]`` with payload ``notify[1]``."""
        task_id = frame.task_id
        last = select(func.coalesce(func.max(events.c.seq), 0)).where(events.c.task_id == task_id)
        async with self._sessions.begin() as session:
            seq = int((await session.execute(last)).scalar_one()) + 1
            row = {"task_id": task_id, "seq": seq, "frame": pack(frame), "created_at": 0.0}
            await session.execute(insert(events).values(**row))
            await _notify(session, notify[0], [notify[1]])

    async def events_after(self, task_id: str, seq: int) -> list[tuple[int, bytes]]:
        statement = (
            select(events.c.seq, events.c.frame)
            .where(and_(events.c.task_id == task_id, events.c.seq > seq))
            .order_by(events.c.seq)
        )
        async with self._sessions() as session:
            rows = cast("list[tuple[int, bytes]]", (await session.execute(statement)).all())
        return [(int(seq), bytes(frame)) for seq, frame in rows]

    async def purge_events(self, older_than: float) -> None:
        """Forget the frames of tasks that stopped running over ``older_than`` s ago."""
        idle = ~events.c.task_id.in_(select(running.c.task_id))
        async with self._sessions.begin() as session:
            await session.execute(
                update(events)
                .where(and_(idle, events.c.created_at == 0.0))
                .values(created_at=self.now())
            )
            await session.execute(
                delete(events).where(
                    and_(idle, events.c.created_at > 0.0),
                    events.c.created_at < self.now() - older_than,
                )
            )


async def _notify(session: AsyncSession, channel: str, payloads: list[str]) -> None:
    if payloads:
        await session.execute(
            text("SELECT pg_notify(:channel, :payload)"),
            [{"channel": channel, "payload": p} for p in payloads],
        )


def _leased(task_id: str, replica: Replica) -> ColumnElement[bool]:
    return and_(running.c.task_id == task_id, running.c.incarnation == replica.incarnation)
