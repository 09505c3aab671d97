"""Where finished tasks are kept: memory, or a2a-sdk's SQL store (SQLite, PostgreSQL).

a2a-sdk's ``tasks`` table declares ``id`` and ``context_id`` as ``VARCHAR(36)``, the
length of a bare UUID. A2A puts no limit on ids, and trpc-style ids are longer
(``task-<uuid>`` is 41 characters, trpc-agent-go's session ids are whatever its users
chose). SQLite ignores the declared length; PostgreSQL and MySQL reject the row, and the
task would be lost. :class:`WideIdTaskStore` widens the two columns once the SDK has
created its table.
"""

from __future__ import annotations

from a2a.server.tasks import DatabaseTaskStore, InMemoryTaskStore, TaskStore
from sqlalchemy import text

#: Longest task / context id and user id (the SDK's owner column) the store can keep;
#: the server refuses longer ones up front.
ID_LENGTH = 255

_WIDEN = {
    "postgresql": "ALTER TABLE {table} ALTER COLUMN id TYPE VARCHAR({n}), "
    "ALTER COLUMN context_id TYPE VARCHAR({n})",
    "mysql": "ALTER TABLE {table} MODIFY id VARCHAR({n}), MODIFY context_id VARCHAR({n}) NOT NULL",
}


class WideIdTaskStore(DatabaseTaskStore):
    """a2a-sdk's ``DatabaseTaskStore`` with room for any A2A task / context id."""

    async def initialize(self) -> None:
        if self._initialized:
            return
        await super().initialize()
        statement = _WIDEN.get(self.engine.dialect.name)
        if statement is not None and self.create_table:
            table = self.task_model.__tablename__
            async with self.engine.begin() as connection:
                await connection.execute(text(statement.format(table=table, n=ID_LENGTH)))


def _database_url(url: str) -> str:
    """Plain ``sqlite://`` / ``postgresql://`` URLs get their async driver."""
    if url.startswith("sqlite://"):
        return "sqlite+aiosqlite://" + url.removeprefix("sqlite://")
    if url.startswith("postgresql://"):
        return "postgresql+asyncpg://" + url.removeprefix("postgresql://")
    return url


def make_task_store(url: str) -> TaskStore:
    """In-memory for ``""``/``memory``, else the SQL store (tables created lazily)."""
    if url in ("", "memory"):
        return InMemoryTaskStore()
    from sqlalchemy.ext.asyncio import create_async_engine

    return WideIdTaskStore(create_async_engine(_database_url(url)))
