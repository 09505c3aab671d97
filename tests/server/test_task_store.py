"""The in-memory store keeps the newest tasks only, per owner scoping intact."""

from __future__ import annotations

from a2a.types import ListTasksRequest, Task, TaskState

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
