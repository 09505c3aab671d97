"""The in-memory task store: the newest tasks within a count and a byte bound, each kept
serialized (``--keep-tasks``, ``--keep-task-mb``; ``docs/deploy.md``).

The bridge keeps finished tasks so that ``tasks/get`` works after a run (trpc deletes them
at once); without a bound, a long-running server's memory would grow with every task it
ever ran, and a count alone does not bound it (10,000 tasks of long answers can take
gigabytes). Use a database store to keep everything.

A task is kept as its protobuf bytes, not as the object: a2a-sdk's in-memory store holds
the objects, and a protobuf object takes about ten times its serialized size (a proxied
tool call's task: 11.4 KB resident against 1.2 KB serialized, ``bench/README.md``), so
10,000 such tasks took ~110 MB. Serializing one costs less than a2a-sdk's copy of it did
(1.6 against 2.8 µs here), and as with its copies (and a database store) every read is a
task of its own that no other caller shares.

``list`` reads a small index of each task (context, state, status time) and parses only
the tasks of the page it answers, with a2a-sdk's in-memory store's rules: its filters,
newest status first (then by id, both descending; tasks without a time last), and its
page tokens (``a2a.utils.task``), so a token one store issued reads the same in the other.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import resolve_user_scope
from a2a.server.tasks import TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, Task
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from a2a.utils.task import (
    ListTasksCursor,
    decode_list_tasks_cursor,
    decode_page_token,
    encode_list_tasks_cursor,
)

from trpc_bridge.server.options import Durability

#: Bytes in a MiB (``--keep-task-mb``).
MIB = 1024 * 1024

#: A task's place in ``list``'s order: (has a status time, the time in ns, id), descending.
_Order = tuple[bool, int, str]


@dataclass(frozen=True, slots=True)
class ListedAs:
    """What ``list`` filters and orders a task by."""

    context_id: str
    state: int
    #: The status time in ns; None: the task has none.
    timestamp_ns: int | None

    @classmethod
    def of(cls, task: Task) -> ListedAs:
        status = task.status
        stamped = task.HasField("status") and status.HasField("timestamp")
        timestamp_ns = status.timestamp.ToNanoseconds() if stamped else None
        return cls(task.context_id, status.state, timestamp_ns)

    def order(self, task_id: str) -> _Order:
        return (self.timestamp_ns is not None, self.timestamp_ns or 0, task_id)


class ListFilter:
    """The filters of a ``ListTasks`` request, as a2a-sdk's stores apply them (the unsaved
    tasks' overlay applies them too: ``unsaved.py``)."""

    def __init__(self, params: ListTasksRequest) -> None:
        self._context_id = params.context_id
        self._state = params.status
        self._after = (
            params.status_timestamp_after.ToNanoseconds()
            if params.HasField("status_timestamp_after")
            else None
        )

    def passes(self, task: ListedAs) -> bool:
        return (
            (not self._context_id or task.context_id == self._context_id)
            and (not self._state or task.state == self._state)
            and (
                self._after is None
                or (task.timestamp_ns is not None and task.timestamp_ns >= self._after)
            )
        )


@dataclass(frozen=True, slots=True)
class _Kept:
    """A stored task: how it is listed, and its bytes."""

    listed: ListedAs
    data: bytes


class BoundedMemoryTaskStore(TaskStore):
    """The newest ``max_tasks`` tasks within ``max_bytes`` of their serialized size (see
    the module doc); rows are scoped by the owner a2a-sdk's resolver reads from the call
    context."""

    def __init__(
        self,
        max_tasks: int = Durability.keep_tasks,
        max_bytes: int = Durability.keep_task_mb * MIB,
    ) -> None:
        self._max_tasks = max_tasks
        self._max_bytes = max_bytes
        #: (owner scope, task id) → the task, oldest first.
        self._tasks: OrderedDict[tuple[str, str], _Kept] = OrderedDict()
        #: The bytes of every kept task.
        self._bytes = 0

    async def save(self, task: Task, context: ServerCallContext) -> None:
        key = (resolve_user_scope(context), task.id)
        kept = _Kept(ListedAs.of(task), task.SerializeToString())
        replaced = self._tasks.pop(key, None)
        if replaced is not None:
            self._bytes -= len(replaced.data)
        self._tasks[key] = kept
        self._bytes += len(kept.data)
        # The newest task stays whatever its size: the run that just ended can be read.
        while len(self._tasks) > 1 and (
            len(self._tasks) > self._max_tasks or self._bytes > self._max_bytes
        ):
            _, dropped = self._tasks.popitem(last=False)
            self._bytes -= len(dropped.data)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        kept = self._tasks.get((resolve_user_scope(context), task_id))
        return None if kept is None else Task.FromString(kept.data)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        owner = resolve_user_scope(context)
        passes = ListFilter(params).passes
        rows = [
            (kept.listed.order(task_id), kept)
            for (scope, task_id), kept in self._tasks.items()
            if scope == owner and passes(kept.listed)
        ]
        rows.sort(key=lambda row: row[0], reverse=True)
        total = len(rows)
        start = _start(rows, params.page_token) if params.page_token else 0
        page_size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        end = start + page_size
        next_page_token = None
        if end < total:
            has_time, timestamp_ns, task_id = rows[end - 1][0]
            cursor = ListTasksCursor(
                timestamp_ns=timestamp_ns if has_time else None, task_id=task_id
            )
            next_page_token = encode_list_tasks_cursor(cursor)
        return ListTasksResponse(
            next_page_token=next_page_token,
            tasks=[Task.FromString(kept.data) for _, kept in rows[start:end]],
            total_size=total,
            page_size=page_size,
        )

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        dropped = self._tasks.pop((resolve_user_scope(context), task_id), None)
        if dropped is not None:
            self._bytes -= len(dropped.data)


def _start(rows: list[tuple[_Order, _Kept]], page_token: str) -> int:
    """Where the page after ``page_token`` starts: just after the task its cursor names
    (which may be gone since), or at the task an older token names by id."""
    cursor = decode_list_tasks_cursor(page_token)
    if cursor is not None:
        position = cursor.sort_key()
        return next((i for i, (order, _) in enumerate(rows) if order < position), len(rows))
    task_id = decode_page_token(page_token)
    for i, (order, _) in enumerate(rows):
        if order[2] == task_id:
            return i
    raise InvalidParamsError(f"Invalid page token: {page_token}")
