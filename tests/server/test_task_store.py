"""The in-memory store keeps the newest tasks only, per owner scoping intact."""

from __future__ import annotations

import asyncio

import pytest
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import ListTasksRequest, Task, TaskState
from a2a.utils.errors import InvalidParamsError
from hypothesis import given, settings
from hypothesis import strategies as st

from trpc_bridge.server.tasks.memory_store import BoundedMemoryTaskStore
from trpc_bridge.server.tasks.store import owner_context


async def test_oldest_tasks_are_dropped_past_the_bound() -> None:
    store = BoundedMemoryTaskStore(max_tasks=3)
    for i, owner in enumerate(["alice", "bob", "alice", "bob", "alice"]):
        await store.save(Task(id=f"t{i}", context_id="c"), owner_context(owner))
    assert await store.get("t0", owner_context("alice")) is None
    assert await store.get("t1", owner_context("bob")) is None
    assert (await store.get("t2", owner_context("alice"))) is not None
    assert (await store.get("t3", owner_context("bob"))) is not None
    assert await store.get("t3", owner_context("alice")) is None  # still scoped by owner
    await store.save(Task(id="t2", context_id="c"), owner_context("alice"))  # refresh t2
    await store.save(Task(id="t5", context_id="c"), owner_context("bob"))
    assert await store.get("t3", owner_context("bob")) is None
    assert (await store.get("t2", owner_context("alice"))) is not None


async def test_what_is_saved_and_read_is_not_shared() -> None:
    """A saved task and a read one are copies (as a database store's are)."""
    store = BoundedMemoryTaskStore()
    alice = owner_context("alice")
    task = Task(id="t1", context_id="c")
    await store.save(task, alice)
    task.context_id = "changed after the save"
    read = await store.get("t1", alice)
    assert read is not None and read.context_id == "c"
    read.context_id = "changed after the read"
    again = await store.get("t1", alice)
    assert again is not None and again.context_id == "c"
    assert await store.get("t1", owner_context("bob")) is None  # scoped by owner


async def test_list_is_the_owners_tasks_filtered_ordered_and_paged() -> None:
    store = BoundedMemoryTaskStore()
    alice, bob = owner_context("alice"), owner_context("bob")
    for i, (owner, context) in enumerate(
        [(alice, "c1"), (alice, "c2"), (bob, "c1"), (alice, "c1"), (alice, "c1")]
    ):
        task = Task(id=f"t{i}", context_id=context)
        task.status.state = TaskState.TASK_STATE_COMPLETED
        task.status.timestamp.FromSeconds(1_000 + i)
        await store.save(task, owner)
    everything = await store.list(ListTasksRequest(), alice)
    assert [t.id for t in everything.tasks] == ["t4", "t3", "t1", "t0"]  # newest first
    first = await store.list(ListTasksRequest(context_id="c1", page_size=2), alice)
    assert [t.id for t in first.tasks] == ["t4", "t3"] and first.total_size == 3
    rest = await store.list(
        ListTasksRequest(context_id="c1", page_size=2, page_token=first.next_page_token), alice
    )
    assert [t.id for t in rest.tasks] == ["t0"] and not rest.next_page_token
    await store.delete("t3", alice)
    assert [t.id for t in (await store.list(ListTasksRequest(), bob)).tasks] == ["t2"]
    assert [t.id for t in (await store.list(ListTasksRequest(), alice)).tasks] == ["t4", "t1", "t0"]


async def test_the_oldest_tasks_are_dropped_past_the_byte_bound() -> None:
    alice = owner_context("alice")
    big = "x" * 1000
    one = len(Task(id="t0", context_id=big).SerializeToString())
    store = BoundedMemoryTaskStore(max_tasks=100, max_bytes=3 * one)
    for i in range(5):
        await store.save(Task(id=f"t{i}", context_id=big), alice)
    kept = [i for i in range(5) if await store.get(f"t{i}", alice) is not None]
    assert kept == [2, 3, 4]
    await store.delete("t4", alice)  # its bytes are freed: room for one more
    await store.save(Task(id="t5", context_id=big), alice)
    assert await store.get("t2", alice) is not None
    # A task larger than the whole bound is kept, alone, until the next one.
    await store.save(Task(id="huge", context_id="y" * (4 * one)), alice)
    assert await store.get("huge", alice) is not None
    assert await store.get("t5", alice) is None


_CONTEXTS = st.sampled_from(["c1", "c2", "c3"])
_STATES = st.sampled_from(
    [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_WORKING]
)
#: A status time in seconds, or none (such tasks are listed last); repeats are likely.
_TIMES = st.one_of(st.none(), st.integers(1_000, 1_010))


@st.composite
def _tasks(draw: st.DrawFn) -> list[Task]:
    ids = draw(st.lists(st.text("abcdef", min_size=1, max_size=3), max_size=25, unique=True))
    tasks = []
    for task_id in ids:
        task = Task(id=task_id, context_id=draw(_CONTEXTS))
        task.status.state = draw(_STATES)
        seconds = draw(_TIMES)
        if seconds is not None:
            task.status.timestamp.FromSeconds(seconds)
        tasks.append(task)
    return tasks


@st.composite
def _requests(draw: st.DrawFn) -> ListTasksRequest:
    request = ListTasksRequest(page_size=draw(st.integers(0, 7)))
    if draw(st.booleans()):
        request.context_id = draw(_CONTEXTS)
    if draw(st.booleans()):
        request.status = draw(_STATES)
    if draw(st.booleans()):
        request.status_timestamp_after.FromSeconds(draw(st.integers(999, 1_011)))
    return request


@settings(max_examples=200, deadline=None)
@given(_tasks(), _requests())
def test_list_pages_as_a2a_sdks_store_does(tasks: list[Task], request: ListTasksRequest) -> None:
    """Filters, order, totals and every page, token by token: the same as a2a-sdk's own
    in-memory store over the same tasks (which the store used to be)."""

    async def pages(store: TaskStore) -> list[tuple[list[str], int, int]]:
        alice = owner_context("alice")
        for task in tasks:
            await store.save(task, alice)
        await store.save(Task(id="other", context_id="c1"), owner_context("bob"))
        answers, token = [], ""
        while True:
            asked = ListTasksRequest()
            asked.CopyFrom(request)
            asked.page_token = token
            answer = await store.list(asked, alice)
            answers.append(([t.id for t in answer.tasks], answer.total_size, answer.page_size))
            token = answer.next_page_token
            if not token:
                return answers

    ours = asyncio.run(pages(BoundedMemoryTaskStore()))
    assert ours == asyncio.run(pages(InMemoryTaskStore()))


@pytest.mark.parametrize("token", ["dDE", "bm9wZQ", "!!!"])  # "t1", "nope", not base64
async def test_an_older_page_token_reads_as_in_a2a_sdks_store(token: str) -> None:
    """A token naming the page's first task by id (a2a-sdk's older form) starts there;
    one naming no task, or not base64, is the same invalid-params error."""
    answers: list[object] = []
    for store in (BoundedMemoryTaskStore(), InMemoryTaskStore()):
        for i in range(3):
            await store.save(Task(id=f"t{i}", context_id="c"), owner_context("alice"))
        try:
            listed = await store.list(ListTasksRequest(page_token=token), owner_context("alice"))
            answers.append([t.id for t in listed.tasks])
        except InvalidParamsError as exc:
            answers.append(str(exc))
    assert answers[0] == answers[1]
