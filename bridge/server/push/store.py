"""Where push-notification configs are kept: in memory, or in the task store's database
(a2a-sdk's ``DatabasePushNotificationConfigStore``) so they survive a restart and every
replica sees the same ones.

a2a-sdk declares the config table's ``task_id`` ``VARCHAR(36)``, a bare UUID, like its
task table: trpc-style task ids (``task-<uuid>``, 41 characters) would be refused by
PostgreSQL. :class:`WideIdPushConfigStore` widens it as the task store widens its ids.
"""

from __future__ import annotations

from a2a.server.tasks import (
    DatabasePushNotificationConfigStore,
    InMemoryPushNotificationConfigStore,
    PushNotificationConfigStore,
    TaskStore,
)

from trpc_bridge.server.tasks.store import WideIdTaskStore, widen

_WIDEN = {
    "postgresql": "ALTER TABLE {table} ALTER COLUMN task_id TYPE VARCHAR({n})",
    "mysql": "ALTER TABLE {table} MODIFY task_id VARCHAR({n}) NOT NULL",
}


class WideIdPushConfigStore(DatabasePushNotificationConfigStore):
    """a2a-sdk's database config store with room for any A2A task id."""

    async def initialize(self) -> None:
        if self._initialized:
            return
        await super().initialize()
        if self.create_table:
            await widen(self.engine, _WIDEN, self.config_model.__tablename__)


def make_push_config_store(task_store: TaskStore) -> PushNotificationConfigStore:
    """In the task store's database when it has one, else in memory."""
    if isinstance(task_store, WideIdTaskStore):
        return WideIdPushConfigStore(task_store.engine)
    return InMemoryPushNotificationConfigStore()
