"""Three replicas of ``trpc-bridge serve`` on one PostgreSQL database, behind a client
that sends each request to another one (no sticky sessions): a task started on A is
read on B, resubscribed on B with nothing lost or twice, cancelled from C (the agent on
A stops), read again on A; identity scoping holds on every replica. A replica killed
with SIGKILL has its task failed by another within the replica timeout, its followers
told, and its restart does not bring the task back. Live frames go through PostgreSQL
LISTEN/NOTIFY or Redis Streams (both measured in bench/replicas.py); the replicas' metrics
time their task-store calls and the frames' way from one replica to the other."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from peers import Process, bridge_server
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from task_calls import TaskCalls, delta_pieces, final_state, message, status_text, task_pieces

from trpc_bridge.server.http.listener import serving

LONG = "trpc_bridge.agents.scenarios:long_slow"  # 1000 deltas, 5 ms apart
ALL_PIECES = [f"t{i} " for i in range(1000)]
TIMEOUT = 2.0  # --replica-timeout: a dead replica's tasks fail within ~4/3 of it


@pytest.fixture
def database(postgres_url: str) -> str:
    """The replicas' task store: a database of this test's own."""
    return postgres_url


@pytest.fixture(params=["postgresql", "redis"])
def fanout(request: pytest.FixtureRequest) -> str:
    if request.param == "postgresql":
        return "postgresql"
    return str(request.getfixturevalue("redis_url"))


def _flags(database: str, fanout: str) -> list[str]:
    return ["--grpc-port", "-1", "--task-store", database, "--fanout", fanout,
            "--replica-timeout", str(TIMEOUT), "--shutdown-grace", "0"]  # fmt: skip


@contextlib.contextmanager
def replicas(database: str, fanout: str, count: int = 3) -> Iterator[list[Process]]:
    with contextlib.ExitStack() as stack:
        yield [
            stack.enter_context(bridge_server(LONG, extra=_flags(database, fanout)))
            for _ in range(count)
        ]


async def _start(calls: TaskCalls) -> str:
    """A ``long`` task started without waiting (nobody streams it on its replica)."""
    answer = await calls.call(
        "message/send", {"message": message("go"), "configuration": {"blocking": False}}
    )
    return str(answer["result"]["id"])


async def _read(stream: Any, count: int) -> list[dict[str, Any]]:
    return [await anext(stream) for _ in range(count)]


def _contiguous(snapshot: dict[str, Any], frames: list[dict[str, Any]]) -> list[str]:
    """Snapshot text + streamed deltas, checked to be a gapless, duplicate-free prefix."""
    pieces = task_pieces(snapshot) + delta_pieces(frames)
    assert pieces == ALL_PIECES[: len(pieces)]
    return pieces


async def test_round_robin_start_get_resubscribe_cancel(database: str, fanout: str) -> None:
    with replicas(database, fanout) as (a, b, c):
        on_a, on_b, on_c = (TaskCalls(p.url) for p in (a, b, c))
        task_id = await _start(on_a)
        await asyncio.sleep(0.5)
        seen_on_b = (await on_b.get(task_id))["result"]
        assert seen_on_b["status"]["state"] in ("submitted", "working")  # trpc: no working
        assert 0 < len(task_pieces(seen_on_b)) == len(_contiguous(seen_on_b, []))

        async with on_b.resubscribe(task_id) as stream:
            snapshot = await anext(stream)
            assert snapshot["kind"] == "task" and snapshot["id"] == task_id
            frames = await _read(stream, 40)
            _contiguous(snapshot, frames)
            for stranger in (TaskCalls(c.url, user="mallory"), TaskCalls(b.url, user="bob")):
                assert (await stranger.get(task_id))["error"]["code"] == -32001
                assert (await stranger.cancel(task_id))["error"]["code"] == -32001
                await stranger.close()
            canceled = (await on_c.cancel(task_id))["result"]
            assert canceled["status"]["state"] == "canceled"
            frames += [frame async for frame in stream]
        assert final_state(frames) == "canceled"
        pieces = _contiguous(snapshot, frames)
        assert len(pieces) < len(ALL_PIECES)  # it stopped midway
        a.wait_for_log(lambda line: line.get("log") == "run_end" and line.get("canceled"))
        stored = (await on_a.get(task_id))["result"]
        assert stored["status"]["state"] == "canceled"
        for calls in (on_a, on_b, on_c):
            await calls.close()


async def test_resubscribe_elsewhere_sees_every_frame_once(database: str, fanout: str) -> None:
    with replicas(database, fanout, count=2) as (a, b):
        on_a, on_b = TaskCalls(a.url), TaskCalls(b.url)
        task_id = await _start(on_a)
        await asyncio.sleep(0.3)
        async with on_b.resubscribe(task_id) as stream:
            snapshot = await anext(stream)
            frames = [frame async for frame in stream]
        assert final_state(frames) == "completed"
        assert _contiguous(snapshot, frames) == ALL_PIECES
        done = (await on_b.get(task_id))["result"]
        assert done["status"]["state"] == "completed"
        await on_a.close()
        await on_b.close()


async def test_a_killed_replica_has_its_tasks_failed_by_another(database: str, fanout: str) -> None:
    with replicas(database, fanout, count=2) as (a, b):
        on_a, on_b = TaskCalls(a.url), TaskCalls(b.url)
        task_id = await _start(on_a)
        async with on_b.resubscribe(task_id) as stream:
            await _read(stream, 10)
            a.proc.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            rest = [frame async for frame in stream]
        waited = time.monotonic() - killed
        assert final_state(rest) == "failed"
        assert "interrupted" in status_text(rest[-1])
        assert waited < TIMEOUT * 3 + 5  # bounded by the replica timeout
        assert (await on_b.get(task_id))["result"]["status"]["state"] == "failed"
        port = a.url.rstrip("/").rsplit(":", 1)[1]
        extra = [*_flags(database, fanout), "--port", port]
        with bridge_server(LONG, extra=extra) as restarted:  # no resurrection
            again = TaskCalls(restarted.url)
            task = (await again.get(task_id))["result"]
            assert task["status"]["state"] == "failed"
            await asyncio.sleep(TIMEOUT)
            assert (await again.get(task_id))["result"]["status"] == task["status"]
            await again.close()
        await on_a.close()
        await on_b.close()


async def test_push_config_set_on_another_replica_is_delivered(database: str, fanout: str) -> None:
    received: list[dict[str, Any]] = []

    async def hook(request: Request) -> Response:
        received.append(await request.json())
        return Response(status_code=200)

    app = Starlette(routes=[Route("/hook", hook, methods=["POST"])])
    flags = [*_flags(database, fanout), "--push-allow-loopback"]
    async with serving(app) as hook_url:
        with contextlib.ExitStack() as stack:
            a, b = (stack.enter_context(bridge_server(LONG, extra=flags)) for _ in range(2))
            on_a, on_b = TaskCalls(a.url), TaskCalls(b.url)
            task_id = await _start(on_a)
            config = {"id": "hook-1", "url": f"{hook_url}/hook", "token": "tok"}
            answer = await on_b.call(
                "tasks/pushNotificationConfig/set",
                {"taskId": task_id, "pushNotificationConfig": config},
            )
            assert answer["result"]["pushNotificationConfig"]["id"] == "hook-1", answer
            async with asyncio.timeout(60):
                while not any(_final_push(body) for body in received):
                    await asyncio.sleep(0.1)
            await on_a.close()
            await on_b.close()


def _final_push(body: dict[str, Any]) -> bool:
    state = body.get("statusUpdate", {}).get("status", {}).get("state")
    return bool(state == "TASK_STATE_COMPLETED")


def _scrape(process: Process) -> dict[str, Any]:
    """The replica's metrics port, parsed by prometheus_client: family name → family."""
    text = httpx.get(process.endpoint("metrics"), timeout=30).text
    return {family.name: family for family in text_string_to_metric_families(text)}


def _counts(family: Any) -> list[tuple[dict[str, str], float]]:
    return [(s.labels, float(s.value)) for s in family.samples if s.name.endswith("_count")]


async def test_metrics_time_the_task_store_and_the_fanout_lag(database: str, fanout: str) -> None:
    """A task run on A and followed from B: A times its journal's claim, checkpoints and
    release; B records the lag of the frames that came to it through the fan-out."""
    backend = "postgresql" if fanout == "postgresql" else "redis"
    extra = [*_flags(database, fanout), "--metrics-port", "0"]
    with contextlib.ExitStack() as stack:
        a, b = (stack.enter_context(bridge_server(LONG, extra=extra)) for _ in range(2))
        on_a, on_b = TaskCalls(a.url), TaskCalls(b.url)
        task_id = await _start(on_a)
        async with on_b.resubscribe(task_id) as stream:
            snapshot = await anext(stream)
            frames = [frame async for frame in stream]
        assert _contiguous(snapshot, frames) == ALL_PIECES
        assert (await on_b.get(task_id))["result"]["status"]["state"] == "completed"
        await on_a.close()
        await on_b.close()
        on_runner, on_follower = _scrape(a), _scrape(b)

    store = on_runner["trpc_bridge_task_store_duration_seconds"]
    assert store.type == "histogram"
    timed = {(labels["trpc_bridge_task_store_operation"], labels["trpc_bridge_outcome"])
             for labels, count in _counts(store) if count}  # fmt: skip
    assert {("claim", "ok"), ("checkpoint", "ok"), ("release", "ok")} <= timed
    own = {frozenset(k for k in labels if not k.startswith("otel_scope_"))
           for labels, _ in _counts(store)}  # fmt: skip
    assert own == {frozenset({"trpc_bridge_task_store_operation", "trpc_bridge_outcome"})}

    lag = on_follower["trpc_bridge_replicas_fanout_lag_seconds"]
    assert lag.type == "histogram"
    [(labels, batches)] = _counts(lag)
    assert labels["trpc_bridge_fanout"] == backend
    # Frames came in batches (one stamp each), some batches per read: fewer than frames.
    assert 0 < batches <= len(frames)
    [total] = [float(s.value) for s in lag.samples if s.name.endswith("_sum")]
    assert 0 <= total / batches < 60  # seconds, not milliseconds or nanoseconds
    # The runner followed nothing from another replica.
    assert "trpc_bridge_replicas_fanout_lag_seconds" not in on_runner or not any(
        count for _, count in _counts(on_runner["trpc_bridge_replicas_fanout_lag_seconds"])
    )
