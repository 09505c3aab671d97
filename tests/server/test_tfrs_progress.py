"""tfrs progress from the bridge server, read by a2a-sdk 1.x clients on every transport
it serves (JSON-RPC 1.0 and 0.3, REST, gRPC 1.0 and 0.3; on 1.0 ``Part.metadata`` is a
protobuf ``Struct``, so the envelope must stay a JSON string in it): only when asked
(extension or request metadata), beside the trpc or plain encoding without changing it,
every update one Part with a text fallback, and kept in ``tasks/get`` history."""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a.client.client import ClientCallContext
from a2a.types import GetTaskRequest, SendMessageRequest, StreamResponse, TaskState
from google.protobuf.json_format import MessageToDict

from trpc_bridge.codecs.a2a.proto_frames import read_proto
from trpc_bridge.codecs.tfrs import (
    EXTENSION_URI,
    METADATA_KEY,
    REQUEST_METADATA_KEY,
    ProgressConsumer,
)
from trpc_bridge.server import BridgeServer

from .helpers import TRANSPORTS, sdk_client, user_message

THINKING = "The user asks about the weather in Shanghai; I should call get_weather."


def _context(*, progress: bool) -> ClientCallContext:
    headers = {"X-User-ID": "alice"}
    if progress:
        headers["A2A-Extensions"] = EXTENSION_URI
    return ClientCallContext(service_parameters=headers)


async def _run(
    server: BridgeServer, transport: str, *, progress: bool, trpc: bool = True, **meta: Any
) -> list[StreamResponse]:
    client = await sdk_client(server.agent_card(), transport, streaming=True)
    message = user_message("weather in Shanghai", trpc=trpc)
    if meta:
        message.metadata.update(meta)
    try:
        return [
            r
            async for r in client.send_message(
                SendMessageRequest(message=message), context=_context(progress=progress)
            )
        ]
    finally:
        await client.close()


def _progress_frames(responses: list[StreamResponse]) -> list[StreamResponse]:
    return [
        r
        for r in responses
        if r.HasField("status_update")
        and r.status_update.status.state == TaskState.TASK_STATE_WORKING
    ]


def _without_progress(responses: list[StreamResponse]) -> list[dict[str, Any]]:
    """The other frames, without what differs between two runs (ids, timestamps)."""
    kept = []
    for response in responses:
        if response in _progress_frames(responses):
            continue
        wire = MessageToDict(response)
        body = next(iter(wire.values()))
        for key in ("taskId", "contextId"):
            body.pop(key, None)
        body.get("status", {}).pop("timestamp", None)
        artifact = body.get("artifact", {})
        artifact.pop("artifactId", None)  # response ids and fresh artifact ids
        for holder in (body, artifact):
            holder.get("metadata", {}).pop("llm_response_id", None)
        body.get("metadata", {}).pop("adk_session_id", None)
        kept.append(wire)
    return kept


def _check_merged(consumer: ProgressConsumer, task_id: str) -> None:
    merger = consumer.merger(task_id)
    streams = merger.streams()
    assert set(streams) == {"", "call_001"}
    assert streams[""].text == THINKING  # the answer is the terminal state's, not progress
    call = streams["call_001"]
    assert (call.kind, call.tool, call.tool_call_id, call.status) == (
        "tool_call",
        "get_weather",
        "call_001",
        "done",
    )
    kinds = [b.kind for b in merger.blocks]
    assert kinds.index("tool_call") == len(THINKING.split())  # one block per thinking delta
    assert [b.status for b in merger.blocks if b.kind == "tool_call"] == ["running", "done"]
    assert merger.loose == []


@pytest.mark.parametrize("trpc", [True, False], ids=["trpc", "plain"])
@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_progress_beside_the_encoding_for_sdk_clients(
    demo_server: BridgeServer, transport: str, trpc: bool
) -> None:
    plain = await _run(demo_server, transport, progress=False, trpc=trpc)
    assert _progress_frames(plain) == []
    responses = await _run(demo_server, transport, progress=True, trpc=trpc)
    # Beside, not instead of: every other frame is what the caller gets without progress.
    assert _without_progress(responses) == _without_progress(plain)
    assert responses[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    consumer = ProgressConsumer()
    for frame in _progress_frames(responses):
        (part,) = frame.status_update.status.message.parts  # one envelope per update
        envelope = part.metadata[METADATA_KEY]
        assert isinstance(envelope, str)  # a JSON string inside the Struct
        assert json.loads(envelope)["v"] == 1 and part.text
    for response in responses:
        consumer.feed(read_proto(response))
    task_id = responses[0].status_update.task_id
    _check_merged(consumer, task_id)
    # Coarse replay: the finished task's history kept every working message.
    client = await sdk_client(demo_server.agent_card(), transport, streaming=False)
    try:
        task = await client.get_task(GetTaskRequest(id=task_id), context=_context(progress=False))
    finally:
        await client.close()
    replay = ProgressConsumer()
    replay.feed(read_proto(task))
    assert replay.merger(task_id).blocks == consumer.merger(task_id).blocks


async def test_request_metadata_asks_too(demo_server: BridgeServer) -> None:
    responses = await _run(
        demo_server, "jsonrpc-1.0", progress=False, **{REQUEST_METADATA_KEY: True}
    )
    consumer = ProgressConsumer()
    for response in responses:
        consumer.feed(read_proto(response))
    _check_merged(consumer, responses[0].status_update.task_id)


async def test_the_card_declares_the_extension(demo_server: BridgeServer) -> None:
    uris = [e.uri for e in demo_server.agent_card().capabilities.extensions]
    assert EXTENSION_URI in uris
