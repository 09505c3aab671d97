"""Live tasks and their fan-out, plus the store that keeps finished ones.

A :class:`LiveTask` exists while an agent run is in progress: one producer drives the
agent and :meth:`LiveTask.publish` applies each frame to the incremental aggregate and
pushes it to every subscriber (the requesting stream and any ``tasks/resubscribe``).
When the run ends the aggregated ``Task`` is saved to the task store (a2a-sdk's
in-memory or SQL store, scoped by owner) and the live task is forgotten.
"""

from __future__ import annotations

import asyncio
import logging

from a2a.server.tasks import TaskStore
from a2a.types import Message, Task

from trpc_bridge.codecs.trpc_encode import StreamFrame
from trpc_bridge.server.aggregate import TaskAggregate
from trpc_bridge.server.subscriber import Subscriber
from trpc_bridge.server.task_store import owner_context

logger = logging.getLogger(__name__)


class LiveTask:
    """One running agent invocation."""

    def __init__(
        self,
        *,
        task_id: str,
        context_id: str,
        owner: str,
        user_message: Message,
        coalesce_after: int,
    ) -> None:
        self.task_id = task_id
        self.context_id = context_id
        self.owner = owner
        self.aggregate = TaskAggregate(
            task_id=task_id, context_id=context_id, user_message=user_message
        )
        self.producer: asyncio.Task[None] | None = None
        self.finished = asyncio.Event()
        self._subscribers: list[Subscriber] = []
        self._coalesce_after = coalesce_after

    def publish(self, frame: StreamFrame) -> None:
        self.aggregate.apply(frame)
        for subscriber in self._subscribers:
            subscriber.push(frame)

    def subscribe(self) -> Subscriber:
        subscriber = Subscriber(self._coalesce_after)
        self._subscribers.append(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)

    @property
    def subscriber_count(self) -> int:
        return len(self._subscribers)

    def cancel(self) -> None:
        """Stop the producer; it publishes the ``canceled`` status itself."""
        if self.producer is not None and not self.producer.done():
            self.producer.cancel()

    def close(self) -> None:
        for subscriber in self._subscribers:
            subscriber.close()
        self.finished.set()


class TaskRegistry:
    """Live tasks by id, and the task store behind them."""

    def __init__(self, store: TaskStore) -> None:
        self.store = store
        self._live: dict[str, LiveTask] = {}

    def add(self, live: LiveTask) -> None:
        self._live[live.task_id] = live

    def live(self, task_id: str, owner: str) -> LiveTask | None:
        """The running task ``task_id`` if ``owner`` created it."""
        live = self._live.get(task_id)
        return live if live is not None and live.owner == owner else None

    async def stored(self, task_id: str, owner: str) -> Task | None:
        return await self.store.get(task_id, owner_context(owner))

    async def retire(self, live: LiveTask, final: Task | None) -> None:
        """Save ``final`` (when given) for ``live``'s owner, then end the live task."""
        try:
            if final is not None:
                await self.store.save(final, owner_context(live.owner))
        except Exception:  # a broken store must not wedge the stream's subscribers
            logger.exception("saving task %s failed", live.task_id)
        finally:
            self._live.pop(live.task_id, None)
            live.close()

    def __len__(self) -> int:
        return len(self._live)
