"""Where finished tasks are kept: memory, or a2a-sdk's SQL store (SQLite, PostgreSQL),
and who owns them (rows are scoped by the caller's identity).

In memory, :class:`~trpc_bridge.server.tasks.memory_store.BoundedMemoryTaskStore` keeps
the newest tasks only. In a database, a2a-sdk's ``tasks`` table declares ``id`` and
``context_id`` as ``VARCHAR(36)``, the length of a bare UUID. A2A puts no limit on ids,
and trpc-style ids are longer (``task-<uuid>`` is 41 characters, trpc-agent-go's session
ids are whatever its users chose). SQLite ignores the declared length; PostgreSQL and
MySQL reject the row, and the task would be lost. :class:`WideIdTaskStore` widens the
two columns once the SDK has created its table.

A store that cannot be used is found at start, not after tasks are lost:
:func:`make_task_store` refuses a URL it cannot serve and :func:`check_task_store` connects,
writes a probe task, reads it back and deletes it; both raise :class:`TaskStoreError`
with one line that says why (the URL's password left out).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.models import TaskModel
from a2a.server.tasks import DatabaseTaskStore, TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task
from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine

from trpc_bridge.names import ANONYMOUS, ID_LENGTH, new_id
from trpc_bridge.server.options import Durability
from trpc_bridge.server.tasks.memory_store import MIB, BoundedMemoryTaskStore
from trpc_bridge.telemetry.metrics import BridgeMetrics, store_timer


class TaskOwner(User):
    """The identity a task belongs to; also the owner key of the task store."""

    def __init__(self, user_id: str) -> None:
        self._user_id = user_id

    @property
    def is_authenticated(self) -> bool:
        return self._user_id != ANONYMOUS

    @property
    def user_name(self) -> str:
        return self._user_id


def owner_context(user_id: str) -> ServerCallContext:
    """A call context whose user is ``user_id``: the task store scopes rows by it."""
    return ServerCallContext(user=TaskOwner(user_id))


_WIDEN = {
    "postgresql": "ALTER TABLE {table} ALTER COLUMN id TYPE VARCHAR({n}), "
    "ALTER COLUMN context_id TYPE VARCHAR({n})",
    "mysql": "ALTER TABLE {table} MODIFY id VARCHAR({n}), MODIFY context_id VARCHAR({n}) NOT NULL",
}


async def widen(engine: AsyncEngine, statements: dict[str, str], table: str) -> None:
    """Run the ``ALTER TABLE`` of ``statements`` for the engine's dialect (none: SQLite
    ignores declared lengths) with ``{table}`` and ``{n}`` = :data:`ID_LENGTH`."""
    statement = statements.get(engine.dialect.name)
    if statement is not None:
        async with engine.begin() as connection:
            await connection.execute(text(statement.format(table=table, n=ID_LENGTH)))


class WideIdTaskStore(DatabaseTaskStore):
    """a2a-sdk's ``DatabaseTaskStore`` with room for any A2A task / context id, its
    calls timed (``trpc_bridge.task_store.duration``) when the server has metrics."""

    #: The server's instruments (set by the server); ``None``: metrics are off.
    metrics: BridgeMetrics | None = None

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        with store_timer(self.metrics, "get"):
            return await super().get(task_id, context)

    async def save(self, task: Task, context: ServerCallContext) -> None:
        with store_timer(self.metrics, "save"):
            await super().save(task, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        with store_timer(self.metrics, "delete"):
            await super().delete(task_id, context)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        with store_timer(self.metrics, "list"):
            return await super().list(params, context)

    async def initialize(self) -> None:
        if self._initialized:
            return
        await super().initialize()
        if self.create_table:
            await widen(self.engine, _WIDEN, self.task_model.__tablename__)

    def model_of(self, task: Task, owner: str) -> TaskModel:
        """The row of ``task`` for ``owner``, to write in a transaction of the journal's."""
        return self._to_orm(task, owner)

    def task_of(self, model: TaskModel) -> Task:
        return self._from_orm(model)


class TaskStoreError(Exception):
    """The task store cannot be used; the message is one line for the operator."""


class TaskBusy(Exception):
    """The task already runs (here or on another replica)."""


#: What a task store URL may start with, and the async driver each one gets.
_DRIVERS = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+asyncpg"}
_USAGE = "use memory, sqlite:////absolute/path.db or postgresql://user@host:port/database"
#: Seconds the start-up check may take (an unreachable host would wait a minute).
CHECK_TIMEOUT = 15.0


def shown_url(url: str) -> str:
    """``url`` fit for a log line or an error: without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url.split("@", 1)[-1] if "@" in url else url


def _database_url(url: str) -> str:
    """A supported URL with its async driver; TaskStoreError otherwise."""
    scheme, sep, rest = url.partition("://")
    dialect, _, driver = scheme.partition("+")
    if not sep or dialect not in _DRIVERS:
        raise TaskStoreError(f"unsupported task store {shown_url(url)!r}: {_USAGE}")
    if driver and scheme != _DRIVERS[dialect]:
        raise TaskStoreError(f"task store {shown_url(url)!r}: driver {driver!r} is not supported")
    if dialect == "sqlite" and not rest.startswith("//"):
        # sqlite:///tasks.db is relative to wherever the server happens to start: the
        # same command run elsewhere would quietly open (and fill) another database.
        path = rest.removeprefix("/").split("?", 1)[0]
        absolute = Path(path or "tasks.db").resolve()
        raise TaskStoreError(
            f"task store {shown_url(url)!r} is a relative path (three slashes): write the "
            f"absolute path with four, e.g. sqlite:///{absolute}"
        )
    return f"{_DRIVERS[dialect]}://{rest}"


def make_task_store(
    url: str,
    *,
    keep_tasks: int = Durability.keep_tasks,
    keep_task_mb: int = Durability.keep_task_mb,
) -> TaskStore:
    """In memory for ``""``/``memory`` (the newest ``keep_tasks`` tasks within
    ``keep_task_mb`` MiB), else the SQL store (tables created by :func:`check_task_store`
    or lazily). A URL that names no supported database raises :class:`TaskStoreError`."""
    if url in ("", "memory"):
        return BoundedMemoryTaskStore(keep_tasks, keep_task_mb * MIB)
    from sqlalchemy.ext.asyncio import create_async_engine

    try:
        engine = create_async_engine(_database_url(url))
    except (ArgumentError, ValueError) as exc:
        raise TaskStoreError(f"task store {shown_url(url)!r}: {first_line(exc)}") from exc
    if engine.dialect.name == "sqlite":
        event.listen(engine.sync_engine, "connect", _sqlite_wal)
    return WideIdTaskStore(engine)


def _sqlite_wal(connection: Any, _: object) -> None:
    """Write-ahead log: a commit (the journal's checkpoints) without a full sync, and
    still nothing lost when the process dies (only a power cut may lose the last one)."""
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def first_line(exc: BaseException) -> str:
    """The useful line of a driver error (SQLAlchemy wraps it and adds a help link)."""
    cause = getattr(exc, "orig", None) or exc
    text = str(cause).strip().splitlines()
    return (text[0] if text else type(cause).__name__)[:300]


async def check_task_store(store: TaskStore, url: str) -> None:
    """Connect, create the tables, write a probe task, read it back, delete it. Raises
    :class:`TaskStoreError` (one line) when any step fails or takes over
    :data:`CHECK_TIMEOUT` seconds."""
    if not isinstance(store, DatabaseTaskStore):
        return
    probe = Task(id=new_id("bridge-probe"), context_id="bridge-probe")
    owner = owner_context("bridge-probe")
    database = store.engine.url.database or ""
    folder = Path(database).parent
    try:
        if store.engine.dialect.name == "sqlite" and database and not folder.is_dir():
            raise TaskStoreError(f"unable to open database file: no folder {str(folder)!r}")
        async with asyncio.timeout(CHECK_TIMEOUT):
            await store.initialize()
            await store.save(probe, owner)
            found = await store.get(probe.id, owner)
            await store.delete(probe.id, owner)
    except TimeoutError:
        reason = f"no answer within {CHECK_TIMEOUT:g} s"
    except Exception as exc:  # every driver has its own errors: report, do not crash
        reason = first_line(exc)
    else:
        if found is not None and found.id == probe.id:
            return
        reason = "a task written could not be read back"
    raise TaskStoreError(f"task store {shown_url(url)!r} is not usable: {reason}")
