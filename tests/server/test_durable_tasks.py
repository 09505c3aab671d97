"""Running tasks survive what a server process goes through: a crash (SIGKILL) leaves a
task that reads ``failed`` with an ``interrupted`` error after a restart (not "not
found"), SIGTERM ends a live stream with a final status frame (not a cut connection),
and a task store that fails mid-run is an error the caller sees (never a ``completed``
that was not stored), which every later read repeats and the store is brought to agree
with once it answers again (never ``submitted`` for ever). Real ``trpc-bridge serve``
processes, real SQLite files (filled up with SQLite's own page limit) and a real
PostgreSQL server (stopped and started again)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from pathlib import Path
from typing import Any

import db_servers
import grpc
import httpx
import pytest
from a2a.server.tasks import DatabaseTaskStore
from a2a.types import TaskState
from peers import bridge_server
from sqlalchemy import event
from task_calls import TaskCalls, delta_pieces, final_state, status_text, task_pieces

from trpc_bridge.agents.scenarios import long_slow
from trpc_bridge.server import BridgeServer, Durability, ServerOptions
from trpc_bridge.server.tasks.store import make_task_store

LONG = "trpc_bridge.agents.scenarios:long_slow"  # 1000 deltas, 5 ms apart
ALL_PIECES = [f"t{i} " for i in range(1000)]


async def _start_long_stream(calls: TaskCalls, frames_wanted: int) -> tuple[str, Any, Any]:
    """Open a ``long`` stream and read ``frames_wanted`` frames; the task id, the open
    stream context and its reader."""
    context = calls.stream("go")
    reader = await context.__aenter__()
    seen = [await anext(reader) for _ in range(frames_wanted)]
    return seen[0]["taskId"], context, reader


async def _until_checkpointed(url: str, task_id: str, pieces: int) -> None:
    """Wait until the store holds a checkpoint of ``task_id`` with at least ``pieces``
    deltas: when the journal writes depends on the machine's load, what it writes does
    not (bounded, in case it never does)."""
    store = make_task_store(url)
    assert isinstance(store, DatabaseTaskStore)
    deadline = time.monotonic() + 60
    try:
        while True:
            task = await store.get(task_id, _owner("alice"))
            text = "".join(p.text for a in task.artifacts for p in a.parts) if task else ""
            if len(text.split()) >= pieces:
                return
            assert time.monotonic() < deadline, f"no checkpoint of {pieces} deltas in 60 s"
            await asyncio.sleep(0.05)
    finally:
        await store.engine.dispose()


def _port(url: str) -> str:
    return url.rstrip("/").rsplit(":", 1)[1]


async def test_a_killed_server_leaves_its_running_task_failed_interrupted(
    task_store_url: str,
) -> None:
    extra = ["--grpc-port", "-1", "--task-store", task_store_url]
    with bridge_server(LONG, extra=extra) as first:
        calls = TaskCalls(first.url)
        task_id, stream, _ = await _start_long_stream(calls, 60)
        await _until_checkpointed(task_store_url, task_id, 50)
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(timeout=10)
        with contextlib.suppress(Exception):  # the connection was cut
            await stream.__aexit__(None, None, None)
        await calls.close()
    # Same port: the same replica id, so its old tasks are orphans at once.
    with bridge_server(LONG, extra=[*extra, "--port", _port(first.url)]) as second:
        calls = TaskCalls(second.url)
        task = (await calls.get(task_id))["result"]
        assert task["status"]["state"] == "failed"
        assert "interrupted" in status_text(task)
        pieces = task_pieces(task)  # the journal kept what was produced, in order
        assert len(pieces) >= 50
        assert pieces == ALL_PIECES[: len(pieces)]
        other = await TaskCalls(second.url, user="mallory").get(task_id)
        assert other["error"]["code"] == -32001  # still scoped to its owner
        await calls.close()


async def test_sigterm_ends_a_live_stream_with_a_final_status_frame(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    extra = ["--grpc-port", "-1", "--task-store", store, "--shutdown-grace", "0.3"]
    with bridge_server(LONG, extra=extra) as server:
        calls = TaskCalls(server.url)
        task_id, stream, reader = await _start_long_stream(calls, 20)
        server.proc.send_signal(signal.SIGTERM)
        rest = [frame async for frame in reader]
        await stream.__aexit__(None, None, None)
        assert rest[-1]["kind"] == "status-update" and rest[-1]["final"] is True
        assert final_state(rest) == "failed"
        assert "interrupted" in status_text(rest[-1])
        assert server.proc.wait(timeout=15) == 0
        await calls.close()
    with bridge_server(LONG, extra=extra) as restarted:  # stored as the stream said
        calls = TaskCalls(restarted.url)
        task = (await calls.get(task_id))["result"]
        assert task["status"]["state"] == "failed"
        await calls.close()


async def test_sigterm_lets_a_stream_finish_within_the_grace_period() -> None:
    extra = ["--grpc-port", "-1", "--shutdown-grace", "60"]
    with bridge_server(LONG, extra=extra) as server:
        calls = TaskCalls(server.url)
        _, stream, reader = await _start_long_stream(calls, 20)
        server.proc.send_signal(signal.SIGTERM)
        await asyncio.sleep(0.5)
        late = TaskCalls(server.url)
        with pytest.raises(httpx.ConnectError):  # no longer accepting connections
            await late.get("x")
        await late.close()
        rest = [frame async for frame in reader]
        await stream.__aexit__(None, None, None)
        assert final_state(rest) == "completed"
        assert delta_pieces(rest) == ALL_PIECES[len(ALL_PIECES) - len(delta_pieces(rest)) :]
        assert server.proc.wait(timeout=15) == 0
        await calls.close()


@pytest.fixture
def cluster() -> Any:
    if reason := db_servers.unavailable():
        pytest.skip(reason)
    with db_servers.postgres_cluster() as server:
        yield server


async def test_a_store_that_fails_mid_run_is_a_failed_task_not_completed(cluster: Any) -> None:
    options = ServerOptions(
        grpc_port=None, durability=Durability(task_store=cluster.url, journal_interval=0.05)
    )
    async with BridgeServer(long_slow, options) as server:
        calls = TaskCalls(server.jsonrpc_url)
        _, stream, reader = await _start_long_stream(calls, 10)
        cluster.stop()
        started = time.monotonic()
        rest = [frame async for frame in reader]
        await stream.__aexit__(None, None, None)
        assert time.monotonic() - started < 60
        assert final_state(rest) == "failed"
        assert "could not be saved" in status_text(rest[-1])
        # A new task cannot be stored: the caller is told before anything runs.
        async with calls.stream("again") as refused:
            first = await anext(refused)
        assert first["error"]["code"] == -32603
        assert "could not be stored" in first["error"]["message"]
        await calls.close()
        cluster.start()


async def test_a_task_is_stored_when_accepted(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    options = ServerOptions(
        grpc_port=None, durability=Durability(task_store=store, journal_interval=60)
    )
    async with BridgeServer(long_slow, options) as server:
        calls = TaskCalls(server.jsonrpc_url)
        task_id, stream, _ = await _start_long_stream(calls, 1)
        stored = await server.task_store.get(task_id, _owner("alice"))
        assert stored is not None
        assert stored.status.state == TaskState.TASK_STATE_SUBMITTED
        await stream.__aexit__(None, None, None)
        await calls.close()


def _owner(user: str) -> Any:
    from trpc_bridge.server.tasks.store import owner_context

    return owner_context(user)


# --- a task whose save failed -------------------------------------------------------------


def _disk_full(connection: Any, _: object) -> None:
    """SQLite's own "database or disk is full": no page past those the file has now."""
    cursor = connection.cursor()
    cursor.execute("PRAGMA page_count")
    cursor.execute(f"PRAGMA max_page_count = {cursor.fetchone()[0]}")
    cursor.close()


class _SqliteDisk:
    """A SQLite store whose disk fills up (every new connection of the server's engine is
    capped at the pages the file has) and is freed again."""

    def __init__(self, server: BridgeServer) -> None:
        self.engine = server.task_store.engine  # type: ignore[attr-defined]

    async def fail(self) -> None:
        event.listen(self.engine.sync_engine, "connect", _disk_full)
        await self.engine.dispose()

    async def recover(self) -> None:
        event.remove(self.engine.sync_engine, "connect", _disk_full)
        await self.engine.dispose()


class _Postgres:
    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster

    async def fail(self) -> None:
        await asyncio.to_thread(self.cluster.stop)

    async def recover(self) -> None:
        await asyncio.to_thread(self.cluster.start)


async def _reads(server: BridgeServer, task_id: str, *, listing: bool = True) -> dict[str, Any]:
    """What each transport says of ``task_id`` to its owner: its state (get, on each
    transport; ListTasks unless not ``listing``), or the error code (resubscribe, cancel)."""
    from a2a.types import GetTaskRequest, a2a_pb2_grpc

    calls = TaskCalls(server.jsonrpc_url)
    got = (await calls.get(task_id))["result"]
    v1 = {"A2A-Version": "1.0"}
    get_1_0 = await calls.http.post(
        server.jsonrpc_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}},
        headers=v1,
    )
    rest = await calls.http.get(f"{server.rest_url}/tasks/{task_id}", headers=v1)
    async with calls.resubscribe(task_id) as frames:
        resubscribed = [frame async for frame in frames]
    cancelled = await calls.cancel(task_id)
    await calls.close()
    async with grpc.aio.insecure_channel(server.grpc_address) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
        by_grpc = await stub.GetTask(GetTaskRequest(id=task_id), metadata=(("x-user-id", "alice"),))
    reads = {
        "tasks/get": (got["status"]["state"], status_text(got)),
        "GetTask": get_1_0.json()["result"]["status"]["state"],
        "REST": rest.json()["status"]["state"],
        "gRPC": TaskState.Name(by_grpc.status.state),
        "resubscribe": resubscribed[0]["error"]["code"],
        "cancel": cancelled["error"]["code"],
    }
    if listing:
        list_call = {"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}}
        async with httpx.AsyncClient(headers={"X-User-ID": "alice", **v1}) as http:
            listed = (await http.post(server.jsonrpc_url, json=list_call)).json()["result"]
        states = {t["id"]: t["status"]["state"] for t in listed["tasks"]}
        reads["ListTasks"] = states.get(task_id, "(not listed)")
    return reads


async def _stored_state(server: BridgeServer, task_id: str) -> int:
    stored = await server.task_store.get(task_id, _owner("alice"))
    assert stored is not None
    return int(stored.status.state)


UNSAVED = "the task could not be saved: the task store failed"
TOLD: dict[str, Any] = {
    "tasks/get": ("failed", UNSAVED),
    "GetTask": "TASK_STATE_FAILED",
    "REST": "TASK_STATE_FAILED",
    "gRPC": "TASK_STATE_FAILED",
    "ListTasks": "TASK_STATE_FAILED",
    "resubscribe": -32004,  # it has ended
    "cancel": -32002,  # it cannot be cancelled
}


@pytest.fixture(params=["sqlite disk full", "postgresql stopped"])
def failing_store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'tasks.db'}", _SqliteDisk
        return
    if reason := db_servers.unavailable():
        pytest.skip(reason)
    with db_servers.postgres_cluster() as cluster:
        yield cluster.url, lambda _server: _Postgres(cluster)


async def test_a_task_whose_save_failed_reads_as_its_caller_was_told(failing_store: Any) -> None:
    """The store fails as a stream ends: the caller is told ``failed``, and from then on
    every read on every transport says ``failed`` too — while the store is still down
    (PostgreSQL: then ListTasks cannot answer at all), once it is back, and after a
    restart, when the stored row itself has been reconciled."""
    url, fault = failing_store
    options = ServerOptions(durability=Durability(task_store=url, journal_interval=0.05))
    async with BridgeServer(long_slow, options) as server:
        store = fault(server)
        calls = TaskCalls(server.jsonrpc_url)
        task_id, stream, reader = await _start_long_stream(calls, 10)
        await store.fail()
        rest = [frame async for frame in reader]
        await stream.__aexit__(None, None, None)
        await calls.close()
        assert final_state(rest) == "failed"
        assert status_text(rest[-1]) == UNSAVED
        if isinstance(store, _SqliteDisk):  # the store still reads, but holds the old row
            assert await _stored_state(server, task_id) != TaskState.TASK_STATE_FAILED
            assert await _reads(server, task_id) == TOLD
        else:  # nothing reads PostgreSQL now: a list cannot be made at all
            told = {k: v for k, v in TOLD.items() if k != "ListTasks"}
            assert await _reads(server, task_id, listing=False) == told
        await store.recover()
        async with asyncio.timeout(60):  # reconciled in the background
            while await _stored_state(server, task_id) != TaskState.TASK_STATE_FAILED:
                await asyncio.sleep(0.1)
        assert await _reads(server, task_id) == TOLD
        assert len(server.runner.tasks.unsaved) == 0
    async with BridgeServer(long_slow, options) as restarted:
        assert await _reads(restarted, task_id) == TOLD
