"""The demo agent through a2a-sdk clients on every transport the bridge serves."""

from __future__ import annotations

from typing import Any

import pytest
from a2a.types import GetTaskRequest, Message, StreamResponse, TaskState
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf.json_format import MessageToDict

from trpc_bridge.server import BridgeServer

from .helpers import TRANSPORTS, as_user, collect, sdk_client, user_message


def _contentless(message: Message) -> bool:
    """No content: no parts (0.3) or only the empty text part 1.0 requires."""
    return not "".join(p.text for p in message.parts) and all(
        p.HasField("text") for p in message.parts
    )


def _parts(responses: list[StreamResponse]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for r in responses:
        if r.HasField("artifact_update"):
            parts.extend(MessageToDict(p) for p in r.artifact_update.artifact.parts)
    return parts


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_streaming_run(demo_server: BridgeServer, transport: str) -> None:
    client = await sdk_client(demo_server.agent_card(), transport, streaming=True)
    responses = await collect(client, user_message("weather in Shanghai"))
    first, last = responses[0], responses[-1]
    assert first.status_update.status.state == TaskState.TASK_STATE_SUBMITTED
    assert dict(first.status_update.metadata)["adk_user_id"] == "alice"
    assert last.status_update.status.state == TaskState.TASK_STATE_COMPLETED
    final_chunk = responses[-2].artifact_update
    assert final_chunk.last_chunk and _contentless(final_chunk.artifact)
    if transport.endswith("1.0"):
        # trpc v1's final chunk: the last artifact id, append; every required field set.
        assert (
            final_chunk.artifact.artifact_id == responses[-3].artifact_update.artifact.artifact_id
        )
        assert final_chunk.append
        for response in responses:
            validate_proto_required_fields(response)
    else:
        assert not final_chunk.artifact.artifact_id and not final_chunk.artifact.parts
    parts = _parts(responses)
    calls = [p for p in parts if p.get("metadata", {}).get("type") == "function_call"]
    assert calls[0]["data"]["args"] == '{"city": "Shanghai"}'  # the verbatim string
    results = [p for p in parts if p.get("metadata", {}).get("type") == "function_response"]
    assert "24" in results[0]["data"]["response"]
    thoughts = [p["text"] for p in parts if p.get("metadata", {}).get("thought") is True]
    assert "".join(thoughts).startswith("The user asks about the weather in Shanghai")
    task_id = first.status_update.task_id
    task = await client.get_task(GetTaskRequest(id=task_id), context=as_user("alice"))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    answer = [a for a in task.artifacts if a.parts and a.parts[0].text.startswith("It is")]
    assert answer[0].parts[0].text == "It is 24°C in Shanghai."  # full text replaced chunks
    assert dict(answer[0].metadata)["object_type"] == "chat.completion"
    await client.close()


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_unary_run(demo_server: BridgeServer, transport: str) -> None:
    client = await sdk_client(demo_server.agent_card(), transport, streaming=False)
    (response,) = await collect(client, user_message("weather in Paris"))
    task = response.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "It is 14°C in Paris."
    # As in trpc, the streamed chunks stay in the history as metadata-only messages.
    # The tool call's message also carries its reasoning (a thought text part, no type).
    kinds = [
        dict(p.metadata)["type"]
        for m in task.history
        if not _contentless(m)
        for p in m.parts
        if "type" in p.metadata
    ]
    assert kinds == ["function_call", "function_response"]
    chunks = [m for m in task.history if _contentless(m)]
    assert chunks and all(m.metadata["object_type"] == "chat.completion.chunk" for m in chunks)
    if transport.endswith("1.0"):
        validate_proto_required_fields(response)
    await client.close()


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_code_and_failure(demo_server: BridgeServer, transport: str) -> None:
    client = await sdk_client(demo_server.agent_card(), transport, streaming=True)
    responses = await collect(client, user_message("run some code"))
    parts = _parts(responses)
    kinds = [p.get("metadata", {}).get("type") for p in parts]
    assert "executable_code" in kinds and "code_execution_result" in kinds
    result = next(p for p in parts if p.get("metadata", {}).get("type") == "code_execution_result")
    assert result["data"] == {"outcome": "", "output": "42\n"}

    failed = await collect(client, user_message("please fail"))
    status = failed[-1].status_update
    assert status.status.state == TaskState.TASK_STATE_FAILED
    metadata = MessageToDict(status.metadata)
    assert metadata["error_code"] == "DEMO_FAILURE"
    assert metadata["error_type"] == "api_error" and metadata["task_state"] == "failed"
    assert status.status.message.parts[0].text == "the demo agent was asked to fail"
    await client.close()


async def test_negotiation_auto_gives_plain_a2a_without_version(
    demo_server: BridgeServer,
) -> None:
    client = await sdk_client(demo_server.agent_card(), "jsonrpc-1.0", streaming=True)
    plain = await collect(client, user_message("weather in Paris", trpc=False))
    parts = _parts(plain)
    assert all("metadata" not in p for p in parts)  # no thoughts, tools, trpc keys
    assert "".join(p["text"] for p in parts) == "It is 14°C in Paris."
    assert all(not r.artifact_update.metadata for r in plain if r.HasField("artifact_update"))
    assert plain[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED

    unary = await sdk_client(demo_server.agent_card(), "jsonrpc-1.0", streaming=False)
    (response,) = await collect(unary, user_message("weather in Paris", trpc=False))
    assert [p.text for p in response.message.parts] == ["It is 14°C in Paris."]
    await client.close()
    await unary.close()
