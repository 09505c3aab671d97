"""The in-memory store keeps the newest tasks only, per owner scoping intact."""

from __future__ import annotations

from a2a.types import Task

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
    """A saved task and a read one are copies (as a database store's are); an adopted
    snapshot is kept as given, without a copy."""
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
    snapshot = Task(id="t2", context_id="c")
    await store.adopt(snapshot, alice)
    assert await store.get("t2", alice) == snapshot
    assert await store.get("t2", owner_context("bob")) is None  # still scoped by owner
