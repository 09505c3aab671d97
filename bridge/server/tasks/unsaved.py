"""Tasks whose last save failed: what their callers were told, until the store has it.

When the task store fails as a streamed run ends (SQLite's disk is full, PostgreSQL is
down), the caller is told ``failed`` "the task could not be saved" — but the store still
holds the row it had before (``submitted``, or the last checkpoint's ``working``), and
with a database store the run's lease too. Left so, ``tasks/get`` would show that row for
ever, while resubscribe and cancel (which see the run is over) call the task finished.

:class:`UnsavedTasks` keeps each such task as its caller last saw it. Every read of the
task goes through it first (get, resubscribe, cancel, a follow-up message, push config
requests, ListTasks), so every answer agrees with what the caller was told, and it
writes the task to the store in the background, retrying with a growing pause, until the
store takes it: from then on the store's row says the same, and the entry is dropped.
What is still unsaved when the server stops is left to the next start, which fails a
task whose lease outlived its server (``interrupted``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskState

from trpc_bridge.server.background import cancel_and_wait
from trpc_bridge.server.tasks.memory_store import ListedAs, ListFilter
from trpc_bridge.server.tasks.store import first_line

logger = logging.getLogger(__name__)

#: Writes the task to the store; raises when the store still fails.
Write = Callable[[], Awaitable[None]]

#: Seconds before the first retry, and the longest pause between two.
FIRST_DELAY = 0.5
MAX_DELAY = 5.0
#: Seconds the last try at shutdown may take (a store that does not answer at all).
LAST_TRY = 5.0


@dataclass(frozen=True)
class _Unsaved:
    task: Task
    owner: str
    write: Write


def _copy(task: Task) -> Task:
    copy = Task()
    copy.CopyFrom(task)
    return copy


class UnsavedTasks:
    def __init__(self, *, first_delay: float = FIRST_DELAY, max_delay: float = MAX_DELAY) -> None:
        self._first_delay = first_delay
        self._max_delay = max_delay
        self._tasks: dict[str, _Unsaved] = {}
        self._retrying: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._tasks)

    def add(self, task: Task, owner: str, write: Write) -> None:
        """``task`` as its caller was told it ended, until ``write`` stores it."""
        self._tasks[task.id] = _Unsaved(_copy(task), owner, write)
        if self._retrying is None or self._retrying.done():
            self._retrying = asyncio.create_task(self._retry())

    def get(self, task_id: str, owner: str) -> Task | None:
        """``owner``'s unsaved task ``task_id``, as its caller was told it ended."""
        found = self._tasks.get(task_id)
        return _copy(found.task) if found is not None and found.owner == owner else None

    def overlay(
        self, page: ListTasksResponse, params: ListTasksRequest, owner: str
    ) -> ListTasksResponse:
        """A page of the store's list with its unsaved tasks as their callers saw them:
        replaced in place (dropped when they no longer pass the filters), and on the first
        page, added when only what the caller was told passes them."""
        mine = {t: u.task for t, u in self._tasks.items() if u.owner == owner}
        if not mine:
            return page
        passes = ListFilter(params).passes
        kept: list[Task] = []
        for task in page.tasks:
            told = mine.pop(task.id, None)
            if told is None:
                kept.append(task)
            elif passes(ListedAs.of(told)):
                kept.append(_copy(told))
            else:
                page.total_size -= 1
        if not params.page_token:
            extra = [_copy(t) for t in mine.values() if passes(ListedAs.of(t))]
            kept = extra + kept
            page.total_size += len(extra)
        del page.tasks[:]
        page.tasks.extend(kept)
        return page

    async def flush(self) -> None:
        """Try to write every unsaved task once (a failure keeps it for later)."""
        for task_id, unsaved in list(self._tasks.items()):
            try:
                await unsaved.write()
            except Exception as exc:  # the store still fails: later
                logger.debug("task %s still unsaved: %s", task_id, first_line(exc))
                continue
            if self._tasks.get(task_id) is unsaved:
                del self._tasks[task_id]
            state = TaskState.Name(unsaved.task.status.state)
            logger.warning("task %s stored as its caller was told it ended (%s)", task_id, state)

    async def _retry(self) -> None:
        delay = self._first_delay
        while self._tasks:
            await asyncio.sleep(delay)
            await self.flush()
            delay = min(self._max_delay, delay * 2)

    async def stop(self) -> None:
        """Stop retrying, after a last try."""
        await cancel_and_wait(self._retrying)
        if self._tasks:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(LAST_TRY):
                    await self.flush()
        if self._tasks:
            logger.error(
                "%d task(s) could not be stored before the server stopped; the next start "
                "fails them (interrupted)",
                len(self._tasks),
            )
