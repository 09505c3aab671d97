"""A server's part in replication, wired as one: the bridge's tables in the task store's
database, the fan-out ``--fanout`` chooses, the journal of running tasks (which the task
registry writes through) and the heartbeat monitor of the other replicas. Started once
the HTTP port is bound (a replica is named by its host and port), stopped in reverse."""

from __future__ import annotations

from trpc_bridge.names import new_hex_id
from trpc_bridge.server.options import Durability
from trpc_bridge.server.replicas.factory import make_fanout
from trpc_bridge.server.replicas.fanout import OnCommand
from trpc_bridge.server.replicas.journal import TaskJournal
from trpc_bridge.server.replicas.monitor import ReplicaMonitor
from trpc_bridge.server.replicas.tables import JournalTables, Replica
from trpc_bridge.server.tasks.registry import TaskRegistry
from trpc_bridge.telemetry.metrics import BridgeMetrics


class Replication:
    """The journal, fan-out and monitor of one server (a database task store)."""

    def __init__(
        self,
        tables: JournalTables,
        durability: Durability,
        tasks: TaskRegistry,
        *,
        metrics: BridgeMetrics | None,
        on_command: OnCommand,
    ) -> None:
        self.tables = tables
        self.fanout = make_fanout(durability.fanout, tables)
        if self.fanout is not None:
            self.fanout.on_command = on_command
            self.fanout.metrics = metrics
        self.journal = TaskJournal(tables, interval=durability.journal_interval, fanout=self.fanout)
        tasks.journal = self.journal
        self.monitor = ReplicaMonitor(
            tables,
            timeout=durability.replica_timeout,
            single_process=tables.dialect == "sqlite",
            fanout=self.fanout,
            interrupt_all=tasks.interrupt_all,
        )

    async def start(self, name: str) -> None:
        """Join as replica ``name`` (host:port) with a new incarnation; the tables exist."""
        replica = Replica(name, new_hex_id())
        if self.fanout is not None:
            await self.fanout.start(replica.incarnation)
        await self.journal.start(replica)
        await self.monitor.start(replica)

    async def stop(self) -> None:
        await self.monitor.stop()
        await self.journal.stop()
        if self.fanout is not None:
            await self.fanout.stop()
