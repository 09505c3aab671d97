"""get / cancel / resubscribe, client disconnect, identity scoping, persistence."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.events import AgentEvent, AgentRequest, ObjectType
from trpc_bridge.server import BridgeServer, Durability, ServerOptions
from trpc_bridge.server.tasks.store import owner_context

from .helpers import (
    TRANSPORTS,
    as_user,
    blocking_agent,
    collect,
    counting_agent,
    go_message,
    jsonrpc,
    sdk_client,
    sse_results,
    user_message,
)


async def _first_task_id(stream) -> str:  # type: ignore[no-untyped-def]
    first = await anext(stream)
    return str(first.status_update.task_id)


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_cancel_stops_the_agent(transport: str) -> None:
    started, stopped = asyncio.Event(), asyncio.Event()
    async with BridgeServer(blocking_agent(started, stopped)) as server:
        client = await sdk_client(server.agent_card(), transport, streaming=True)
        stream = client.send_message(
            SendMessageRequest(message=user_message("go")), context=as_user("alice")
        )
        task_id = await _first_task_id(stream)
        await started.wait()
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id), context=as_user("alice"))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        assert stopped.is_set()  # the agent's iterator was closed
        rest = [r async for r in stream]
        assert rest[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED
        task = await client.get_task(GetTaskRequest(id=task_id), context=as_user("alice"))
        assert task.status.state == TaskState.TASK_STATE_CANCELED
        await client.close()


async def test_disconnect_cancels_the_run() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()
    async with (
        BridgeServer(blocking_agent(started, stopped), ServerOptions(grpc_port=None)) as server,
        httpx.AsyncClient(timeout=None) as http,
    ):
        body = jsonrpc("message/stream", {"message": go_message("go")})
        async with http.stream("POST", server.jsonrpc_url, json=body) as response:
            frames = sse_results(response)
            task_id = (await anext(frames))["taskId"]
            await started.wait()
        # Leaving the `async with` closed the connection mid-stream.
        await asyncio.wait_for(stopped.wait(), timeout=10)
        client = await sdk_client(server.agent_card(), "jsonrpc-1.0", streaming=False)
        for _ in range(100):  # the producer publishes `canceled` right after the close
            task = await client.get_task(GetTaskRequest(id=task_id), context=as_user("anonymous"))
            if task.status.state == TaskState.TASK_STATE_CANCELED:
                break
            await asyncio.sleep(0.01)
        assert task.status.state == TaskState.TASK_STATE_CANCELED
        await client.close()


async def test_a_stream_ends_with_the_runs_last_frame_before_its_cleanup() -> None:
    """The caller's stream ends once the run's last frame is out: closing the agent's
    generator and finishing the run come after it, not before (``live_task.py``). The
    in-memory store has the task by then: it is saved right after that frame, before
    anything else (``registry.py``)."""
    released, cleaned = asyncio.Event(), asyncio.Event()

    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        try:
            yield AgentEvent.text_delta("hi", "chatcmpl-end")
            yield AgentEvent(object=ObjectType.RUNNER_COMPLETION, done=True)
        finally:
            await released.wait()
            cleaned.set()

    agent = FunctionAgent(name="slow-cleanup", description="cleans up slowly", fn=run)
    async with (
        BridgeServer(agent, ServerOptions(grpc_port=None)) as server,
        httpx.AsyncClient(timeout=None) as http,
    ):
        body = jsonrpc("message/stream", {"message": go_message("go")})

        async def read() -> list[dict[str, object]]:
            async with http.stream("POST", server.jsonrpc_url, json=body) as response:
                return [result async for result in sse_results(response)]

        results = await asyncio.wait_for(read(), timeout=10)
        assert results[-1]["final"] is True and not cleaned.is_set()
        task_id = str(results[0]["taskId"])
        stored = await server.task_store.get(task_id, owner_context("anonymous"))
        assert stored is not None and stored.status.state == TaskState.TASK_STATE_COMPLETED
        client = await sdk_client(server.agent_card(), "jsonrpc-1.0", streaming=False)
        task = await client.get_task(GetTaskRequest(id=task_id), context=as_user("anonymous"))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        released.set()
        await asyncio.wait_for(cleaned.wait(), timeout=10)
        await client.close()


@pytest.mark.parametrize("transport", ["jsonrpc-1.0", "jsonrpc-0.3", "grpc-1.0"])
async def test_resubscribe_sees_snapshot_then_live_frames(transport: str) -> None:
    started, stopped = asyncio.Event(), asyncio.Event()
    async with BridgeServer(blocking_agent(started, stopped)) as server:
        client = await sdk_client(server.agent_card(), transport, streaming=True)
        stream = client.send_message(
            SendMessageRequest(message=user_message("go")), context=as_user("alice")
        )
        task_id = await _first_task_id(stream)
        await started.wait()
        resub = client.subscribe(SubscribeToTaskRequest(id=task_id), context=as_user("alice"))
        snapshot = (await anext(resub)).task
        assert snapshot.id == task_id
        assert snapshot.artifacts[0].parts[0].text == "first"
        await client.cancel_task(CancelTaskRequest(id=task_id), context=as_user("alice"))
        rest = [r async for r in resub]
        assert rest[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED
        await stream.aclose()  # type: ignore[attr-defined]
        await client.close()


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_tasks_are_visible_only_to_their_owner(
    demo_server: BridgeServer, transport: str
) -> None:
    client = await sdk_client(demo_server.agent_card(), transport, streaming=True)
    responses = await collect(client, user_message("weather in Paris"), user="alice")
    task_id = responses[0].status_update.task_id
    assert responses[0].status_update.metadata["adk_user_id"] == "alice"
    own = await client.get_task(GetTaskRequest(id=task_id), context=as_user("alice"))
    assert own.id == task_id
    for call in (
        client.get_task(GetTaskRequest(id=task_id), context=as_user("bob")),
        client.cancel_task(CancelTaskRequest(id=task_id), context=as_user("bob")),
        client.get_task(GetTaskRequest(id=task_id)),  # anonymous
    ):
        with pytest.raises(TaskNotFoundError):
            await call
    with pytest.raises(TaskNotFoundError):
        resub = client.subscribe(SubscribeToTaskRequest(id=task_id), context=as_user("bob"))
        await anext(resub)
    await client.close()


async def test_completed_tasks_survive_a_restart(task_store_url: str) -> None:
    options = ServerOptions(grpc_port=None, durability=Durability(task_store=task_store_url))
    async with BridgeServer(demo_agent(), options) as server:
        client = await sdk_client(server.agent_card(), "jsonrpc-1.0", streaming=True)
        responses = await collect(client, user_message("weather in London"), user="alice")
        task_id = responses[0].status_update.task_id
        await client.close()
    async with BridgeServer(demo_agent(), options) as restarted:
        client = await sdk_client(restarted.agent_card(), "jsonrpc-1.0", streaming=False)
        task = await client.get_task(GetTaskRequest(id=task_id), context=as_user("alice"))
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        texts = [a.parts[0].text for a in task.artifacts if a.parts and a.parts[0].text]
        assert "It is 11°C in London." in texts
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=task_id), context=as_user("bob"))
        await client.close()


async def test_counting_agent_aggregate_is_complete() -> None:
    async with BridgeServer(counting_agent(300), ServerOptions(grpc_port=None)) as server:
        client = await sdk_client(server.agent_card(), "jsonrpc-1.0", streaming=True)
        responses = await collect(client, user_message("count"))
        task_id = responses[0].status_update.task_id
        task = await client.get_task(GetTaskRequest(id=task_id), context=as_user("alice"))
        assert task.artifacts[0].parts[0].text == "".join(f"t{i} " for i in range(300))
        await client.close()
