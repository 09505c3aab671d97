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
