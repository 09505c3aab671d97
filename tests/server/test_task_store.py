"""The in-memory store keeps the newest tasks only, per owner scoping intact."""

from __future__ import annotations

from a2a.types import ListTasksRequest, Task

from trpc_bridge.server.tasks.store import BoundedMemoryTaskStore, owner_context


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


class _Source:
    """A finished run's aggregate as the store sees it: counts the tasks it built."""

    def __init__(self, task: Task) -> None:
        self.task = task
        self.built = 0

    def snapshot(self, history_length: int | None = None) -> Task:
        self.built += 1
        return Task(id=self.task.id, context_id=self.task.context_id)


async def test_a_kept_task_is_built_on_its_first_read_only() -> None:
    store = BoundedMemoryTaskStore()
    source = _Source(Task(id="t1", context_id="c"))
    await store.keep("t1", "alice", source)
    assert source.built == 0
    assert await store.get("t1", owner_context("bob")) is None  # still scoped by owner
    assert source.built == 0
    first = await store.get("t1", owner_context("alice"))
    assert first == Task(id="t1", context_id="c") and source.built == 1
    first.context_id = "changed after the read"
    assert await store.get("t1", owner_context("alice")) == Task(id="t1", context_id="c")
    assert source.built == 1


async def test_kept_tasks_are_listed_bounded_replaced_and_deleted() -> None:
    store = BoundedMemoryTaskStore(max_tasks=2)
    alice, bob = owner_context("alice"), owner_context("bob")
    await store.keep("t1", "alice", _Source(Task(id="t1", context_id="c")))
    await store.keep("t2", "bob", _Source(Task(id="t2", context_id="c")))
    listed = await store.list(ListTasksRequest(), alice)
    assert [task.id for task in listed.tasks] == ["t1"]
    # A newer run of t1 replaces the version built for the list.
    await store.keep("t1", "alice", _Source(Task(id="t1", context_id="newer")))
    task = await store.get("t1", alice)
    assert task is not None and task.context_id == "newer"
    await store.keep("t3", "alice", _Source(Task(id="t3", context_id="c")))
    assert await store.get("t2", bob) is None  # the oldest, dropped unbuilt
    await store.delete("t3", alice)
    assert await store.get("t3", alice) is None
    await store.save(Task(id="t4", context_id="c"), bob)
    assert await store.get("t1", alice) is not None  # t3's deletion made room
