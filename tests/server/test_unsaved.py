"""How a page of ListTasks shows the tasks whose end is not stored yet: as their callers
were told they ended, and only to their owners (the reads and the reconciling against
real stores are in ``test_durable_tasks.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from a2a.types import ListTasksRequest, ListTasksResponse, Task, TaskState, TaskStatus

from trpc_bridge.server.tasks.unsaved import UnsavedTasks

FAILED = TaskState.TASK_STATE_FAILED
WORKING = TaskState.TASK_STATE_WORKING


def _task(task_id: str, state: TaskState, context_id: str = "ctx") -> Task:
    return Task(id=task_id, context_id=context_id, status=TaskStatus(state=state))


def _page(*tasks: Task) -> ListTasksResponse:
    return ListTasksResponse(tasks=list(tasks), total_size=len(tasks), page_size=50)


async def _never() -> None:
    raise OSError("the store is down")


@pytest.fixture
async def unsaved() -> AsyncIterator[UnsavedTasks]:
    """Alice's task t1, told ``failed``, its stored row still ``working``."""
    tasks = UnsavedTasks(first_delay=3600)
    tasks.add(_task("t1", FAILED), "alice", _never)
    yield tasks
    await tasks.stop()  # its last try fails too: the task stays unsaved
    assert len(tasks) == 1


def _ids_and_states(page: ListTasksResponse) -> list[tuple[str, int]]:
    return [(t.id, t.status.state) for t in page.tasks]


async def test_an_unsaved_task_replaces_its_stale_row(unsaved: UnsavedTasks) -> None:
    page = unsaved.overlay(
        _page(_task("t0", WORKING), _task("t1", WORKING)), ListTasksRequest(), "alice"
    )
    assert _ids_and_states(page) == [("t0", WORKING), ("t1", FAILED)]
    assert page.total_size == 2


async def test_filters_apply_to_what_the_caller_was_told(unsaved: UnsavedTasks) -> None:
    working = unsaved.overlay(
        _page(_task("t0", WORKING), _task("t1", WORKING)), ListTasksRequest(status=WORKING), "alice"
    )
    assert _ids_and_states(working) == [("t0", WORKING)]
    assert working.total_size == 1
    failed = unsaved.overlay(_page(), ListTasksRequest(status=FAILED), "alice")
    assert _ids_and_states(failed) == [("t1", FAILED)]
    later_page = unsaved.overlay(_page(), ListTasksRequest(status=FAILED, page_token="x"), "alice")
    assert _ids_and_states(later_page) == []
    other_context = unsaved.overlay(_page(), ListTasksRequest(context_id="other"), "alice")
    assert _ids_and_states(other_context) == []


async def test_only_its_owner_sees_it(unsaved: UnsavedTasks) -> None:
    assert unsaved.get("t1", "mallory") is None
    page = unsaved.overlay(_page(_task("t1", WORKING)), ListTasksRequest(), "mallory")
    assert _ids_and_states(page) == [("t1", WORKING)]
    told = unsaved.get("t1", "alice")
    assert told is not None and told.status.state == FAILED
