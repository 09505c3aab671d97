"""The fan-out a server uses, chosen by ``--fanout``; the backends are imported only when
chosen (a Redis client need not be installed for PostgreSQL)."""

from __future__ import annotations

from trpc_bridge.server.replicas.fanout import FanOut
from trpc_bridge.server.replicas.tables import JournalTables
from trpc_bridge.server.tasks.store import TaskStoreError


def make_fanout(choice: str, tables: JournalTables) -> FanOut | None:
    """The fan-out ``choice`` names (``--fanout``): ``auto`` = through the PostgreSQL task
    store when that is the store, ``postgresql``, ``redis://…``, ``none``."""
    dialect = tables.dialect
    if choice == "none" or (choice == "auto" and dialect != "postgresql"):
        return None
    if choice in ("auto", "postgresql"):
        if dialect != "postgresql":
            raise TaskStoreError("--fanout postgresql needs a PostgreSQL task store")
        from trpc_bridge.server.replicas.fanout_pg import PgFanOut

        return PgFanOut(tables)
    if choice.startswith(("redis://", "rediss://")):
        if dialect != "postgresql":
            raise TaskStoreError("--fanout redis:// needs a PostgreSQL task store (shared state)")
        from trpc_bridge.server.replicas.fanout_redis import RedisFanOut

        return RedisFanOut(choice)
    raise TaskStoreError(f"unknown --fanout {choice!r}: use auto, none, postgresql or redis://…")
