"""The tfrs consumer against a producer built on a2a-sdk alone (``tfrs_peer``), read by
a2a-sdk 1.x clients on JSON-RPC, REST and gRPC and by the bridge's own 0.3 JSON-RPC
reader: the same merged progress from the live stream, from a ``SubscribeToTask`` stream
joined while the task works (after ``return_immediately``), and from ``tasks/get``
history; the answer only ever comes from the terminal state."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from a2a.client.client import Client
from a2a.types import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from server.helpers import sdk_client as server_sdk_client
from tfrs_peer import ANSWER, EXPECTED_BLOCKS, EXPECTED_LOOSE, TfrsPeer, tfrs_peer

from trpc_bridge.client import RemoteAgent
from trpc_bridge.codecs.a2a.frames import StatusFrame, TaskFrame, read_result
from trpc_bridge.codecs.a2a.proto_frames import read_proto
from trpc_bridge.codecs.tfrs import ProgressConsumer

#: a2a-sdk 1.x clients, one per transport the peer serves at A2A 1.0.
BINDINGS = ["jsonrpc-1.0", "rest-1.0", "grpc-1.0"]


@contextlib.asynccontextmanager
async def sdk_client(peer: TfrsPeer, transport: str, *, streaming: bool) -> AsyncIterator[Client]:
    client = await server_sdk_client(peer.card, transport, streaming=streaming)
    try:
        yield client
    finally:
        await client.close()


def _request(*, return_immediately: bool = False) -> SendMessageRequest:
    message = Message(
        message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text="weather?")]
    )
    request = SendMessageRequest(message=message)
    request.configuration.return_immediately = return_immediately
    return request


def _assert_progress(consumer: ProgressConsumer, task_id: str, loose: list[str]) -> None:
    merger = consumer.merger(task_id)
    assert [b.key for b in merger.blocks] == EXPECTED_BLOCKS
    assert [i.text for i in merger.loose] == loose
    tool = merger.streams()["call-1"]
    assert (tool.tool, tool.status) == ("get_weather", "done")
    assert all(ANSWER not in b.text for b in merger.blocks)


def _answer(results: list[Any]) -> str:
    final = read_result(results[-1])
    message = final.message if isinstance(final, StatusFrame) else None
    if isinstance(final, TaskFrame):
        message = final.status_message
    assert final.state == "completed" and message is not None  # type: ignore[union-attr]
    return "".join(p.text for p in message.parts)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_live_stream_merges_the_script(binding: str) -> None:
    async with tfrs_peer() as peer, sdk_client(peer, binding, streaming=True) as client:
        results = [read_proto(r) async for r in client.send_message(_request())]
    consumer = ProgressConsumer()
    for result in results:
        consumer.feed(result)
    (task_id,) = consumer.task_ids
    _assert_progress(consumer, task_id, EXPECTED_LOOSE)
    assert _answer(results) == ANSWER


async def test_bridge_0_3_reader_merges_the_script() -> None:
    async with tfrs_peer() as peer:
        agent = await RemoteAgent.connect(peer.base_url, transport="jsonrpc", version="0.3")
        async with agent:
            message = Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="hi")])
            assert agent.endpoint.version == "0.3"  # the 0.3 JSON shape
            results = [r async for r in agent._transport.stream(message, {})]
    consumer = ProgressConsumer()
    for result in results:
        consumer.feed(result)
    _assert_progress(consumer, consumer.task_ids[0], EXPECTED_LOOSE)
    assert _answer(results) == ANSWER


@pytest.mark.parametrize("binding", BINDINGS)
async def test_subscribe_after_return_immediately_merges_the_same(binding: str) -> None:
    consumer = ProgressConsumer()
    async with tfrs_peer(pause_after=4) as peer:
        async with sdk_client(peer, binding, streaming=False) as client:
            (first,) = [r async for r in client.send_message(_request(return_immediately=True))]
            task_id = first.task.id
        async with sdk_client(peer, binding, streaming=True) as client:
            subscription = client.subscribe(SubscribeToTaskRequest(id=task_id))
            results = []
            async for response in subscription:
                results.append(read_proto(response))
                consumer.feed(results[-1])
                if len(results) == 1:
                    # joined while working: what came before arrives as the snapshot
                    peer.release()
    _assert_progress(consumer, task_id, EXPECTED_LOOSE)
    assert _answer(results) == ANSWER


@pytest.mark.parametrize("binding", BINDINGS)
async def test_tasks_get_history_replays_the_envelopes(binding: str) -> None:
    async with tfrs_peer() as peer, sdk_client(peer, binding, streaming=True) as client:
        streamed = [read_proto(r) async for r in client.send_message(_request())]
        task_id = read_result(streamed[-1]).task_id  # type: ignore[union-attr]
        task = await client.get_task(GetTaskRequest(id=task_id))
    consumer = ProgressConsumer()
    new = consumer.feed(read_proto(task))
    # History keeps only messages with a tfrs key as progress: the plain line is not there.
    _assert_progress(consumer, task_id, ["from the future", "a broken envelope"])
    assert len(new) == len(EXPECTED_BLOCKS) + 2
    # Replaying the live stream on top adds only the plain line the history could not tell.
    again = [i for r in streamed for i in consumer.feed(r)]
    assert [i.text for i in again] == ["plain progress line"]
