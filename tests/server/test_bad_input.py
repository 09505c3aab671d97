"""Malformed or refused requests get the precise error, and the server keeps serving:
after every case a normal ``message/send`` must still succeed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
import pytest
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, a2a_pb2_grpc

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.agents.scenarios import SCRIPTS, ScenarioAgent
from trpc_bridge.server import BridgeServer, ServerOptions

from .helpers import go_message, jsonrpc, sse_results

LIMIT = 64 * 1024


def _msg(**changes: Any) -> dict[str, Any]:
    message = {
        "kind": "message",
        "messageId": "m1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
    }
    message.update(changes)
    return message


def _send(message: dict[str, Any], method: str = "message/send") -> dict[str, Any]:
    return jsonrpc(method, {"message": message}, rpc_id=1)


JSON = {"content-type": "application/json"}
V1 = {"A2A-Version": "1.0"}

#: name → (request kwargs for httpx.post, HTTP status, JSON-RPC error code, message part)
CASES: dict[str, tuple[dict[str, Any], int, int, str]] = {
    "malformed JSON": ({"content": b"{not json", "headers": JSON}, 200, -32700, "Expecting"),
    "jsonrpc version 1.0": (
        {"json": dict(_send(_msg()), jsonrpc="1.0")},
        200,
        -32600,
        "'jsonrpc' must be exactly '2.0'",
    ),
    "missing method": (
        {"json": {"jsonrpc": "2.0", "id": 1, "params": {}}},
        200,
        -32600,
        "Invalid Request",
    ),
    "unknown method": ({"json": jsonrpc("foo/bar", {}, rpc_id=1)}, 200, -32601, "Method not found"),
    "params not an object": (
        {"json": {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": [1]}},
        200,
        -32600,
        "Invalid Request",
    ),
    "message without parts (0.3)": (
        {"json": _send(_msg(parts=[]))},
        200,
        -32602,
        "at least one part",
    ),
    "message without parts (1.0)": (
        {
            "json": jsonrpc(
                "SendMessage",
                {"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}},
                rpc_id=1,
            ),
            "headers": V1,
        },
        200,
        -32602,
        "at least one part",
    ),
    "unknown part kind": (
        {"json": _send(_msg(parts=[{"kind": "video"}]))},
        200,
        -32600,
        "Invalid Request",
    ),
    "missing messageId": (
        {
            "json": _send(
                {"kind": "message", "role": "user", "parts": [{"kind": "text", "text": "x"}]}
            )
        },
        200,
        -32600,
        "Invalid Request",
    ),
    "oversized body": (
        {"json": _send(_msg(parts=[{"kind": "text", "text": "x" * (LIMIT + 1)}]))},
        413,
        -32600,
        "Payload too large",
    ),
    "unknown task id": (
        {"json": jsonrpc("tasks/get", {"id": "nope"}, rpc_id=1)},
        200,
        -32001,
        "not found",
    ),
    "cancel unknown task": (
        {"json": jsonrpc("tasks/cancel", {"id": "nope"}, rpc_id=1)},
        200,
        -32001,
        "not found",
    ),
    "message for an unknown task": ({"json": _send(_msg(taskId="nope"))}, 200, -32001, "not found"),
    "wrong content type": (
        {
            "content": json.dumps(jsonrpc("tasks/get", {"id": "x"})).encode(),
            "headers": {"content-type": "text/plain"},
        },
        415,
        -32005,  # ContentTypeNotSupportedError (A2A 1.0 §5.4)
        "Content-Type must be application/json",
    ),
    "1.0 method without A2A-Version": (
        {"json": jsonrpc("GetTask", {"id": "x"}, rpc_id=1)},
        200,
        -32009,
        "Expected version '1.0'",
    ),
    "0.3 method with A2A-Version 1.0": (
        {"json": jsonrpc("tasks/get", {"id": "x"}, rpc_id=1), "headers": V1},
        200,
        -32603,
        "Expected version '0.3'",
    ),
    "contextId too long for the task store": (
        {"json": _send(_msg(contextId="c" * 256))},
        200,
        -32602,
        "contextId is longer than 255",
    ),
    "X-User-ID too long for the task store": (
        {"json": _send(_msg()), "headers": {"X-User-ID": "u" * 256}},
        200,
        -32602,
        "X-User-ID is longer than 255",
    ),
    "unknown A2A-Version": (
        {"json": jsonrpc("GetTask", {"id": "x"}, rpc_id=1), "headers": {"A2A-Version": "9.9"}},
        200,
        -32009,
        "A2A version '9.9' is not supported",
    ),
    "batch request": ({"json": [jsonrpc("tasks/get", {"id": "x"})]}, 200, -32600, "Batch requests"),
    "boolean id": (
        {"json": {"jsonrpc": "2.0", "id": True, "method": "tasks/get", "params": {"id": "x"}}},
        200,
        -32600,
        "id must be a string",
    ),
}


@pytest.fixture
async def server() -> AsyncIterator[BridgeServer]:
    async with BridgeServer(demo_agent(), ServerOptions(max_request_bytes=LIMIT)) as running:
        yield running


async def _still_serving(http: httpx.AsyncClient, server: BridgeServer) -> None:
    ok = await http.post(
        server.jsonrpc_url,
        json=jsonrpc("message/send", {"message": go_message("weather in Paris")}),
    )
    assert ok.json()["result"]["kind"] == "task"


@pytest.mark.parametrize("name", list(CASES))
async def test_bad_request(server: BridgeServer, name: str) -> None:
    kwargs, status, code, text = CASES[name]
    async with httpx.AsyncClient(timeout=None) as http:
        response = await http.post(server.jsonrpc_url, **kwargs)
        assert response.status_code == status
        error = response.json()["error"]
        assert error["code"] == code
        assert text in error["message"]
        await _still_serving(http, server)


async def test_task_of_another_user_is_not_found(server: BridgeServer) -> None:
    async with httpx.AsyncClient(timeout=None) as http:
        created = await http.post(
            server.jsonrpc_url,
            json=jsonrpc("message/send", {"message": go_message("weather in Paris")}),
            headers={"X-User-ID": "alice"},
        )
        task_id = created.json()["result"]["id"]
        for user in ("bob", None):
            headers = {"X-User-ID": user} if user else {}
            response = await http.post(
                server.jsonrpc_url, json=jsonrpc("tasks/get", {"id": task_id}), headers=headers
            )
            assert response.json()["error"]["code"] == -32001
        mine = await http.post(
            server.jsonrpc_url,
            json=jsonrpc("tasks/get", {"id": task_id}),
            headers={"x-user-id": "alice"},
        )
        assert mine.json()["result"]["id"] == task_id
        await _still_serving(http, server)


async def test_resubscribe_to_finished_task(server: BridgeServer) -> None:
    async with httpx.AsyncClient(timeout=None) as http:
        created = await http.post(
            server.jsonrpc_url,
            json=jsonrpc("message/send", {"message": go_message("weather in Paris")}),
        )
        task_id = created.json()["result"]["id"]
        body = jsonrpc("tasks/resubscribe", {"id": task_id})
        async with http.stream("POST", server.jsonrpc_url, json=body) as response:
            frames = [f async for f in sse_results(response)]
        # One SSE frame with the error, as a2a-sdk's 0.3 adapter streams it.
        assert [f["error"]["code"] for f in frames] == [-32004]  # terminal state
        await _still_serving(http, server)


async def test_rest_oversized_body(server: BridgeServer) -> None:
    async with httpx.AsyncClient(timeout=None) as http:
        response = await http.post(
            f"{server.rest_url}/message:send", content=b"x" * (LIMIT + 1), headers=dict(JSON, **V1)
        )
        assert response.status_code == 413
        await _still_serving(http, server)


async def test_grpc_oversized_and_unknown_task(server: BridgeServer) -> None:
    async with grpc.aio.insecure_channel(server.grpc_address) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
        big = Message(message_id="m", role=Role.ROLE_USER, parts=[Part(text="x" * (LIMIT + 1))])
        with pytest.raises(grpc.aio.AioRpcError) as too_big:
            await stub.SendMessage(SendMessageRequest(message=big))
        assert too_big.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await stub.GetTask(GetTaskRequest(id="nope"))
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND
        small = Message(message_id="m2", role=Role.ROLE_USER, parts=[Part(text="weather in Paris")])
        answer = await stub.SendMessage(SendMessageRequest(message=small))
        assert answer.message.parts[0].text == "It is 14°C in Paris."  # plain A2A: no version


async def test_bad_requests_leave_a_running_stream_whole() -> None:
    """Every bad request above, sent while another caller's stream is running: each gets
    its error, and the running stream still delivers all of its text and completes."""
    slow = ScenarioAgent("long", SCRIPTS["long"], delay=0.001)
    options = ServerOptions(max_request_bytes=LIMIT, grpc_port=None)
    async with BridgeServer(slow, options) as server, httpx.AsyncClient(timeout=None) as http:
        body = jsonrpc("message/stream", {"message": go_message("go")})
        async with http.stream("POST", server.jsonrpc_url, json=body) as stream:
            frames = sse_results(stream)
            first = await anext(frames)
            assert first["status"]["state"] == "submitted"
            for kwargs, status, code, _ in CASES.values():
                response = await http.post(server.jsonrpc_url, **kwargs)
                assert response.status_code == status
                assert response.json()["error"]["code"] == code
            rest = [frame async for frame in frames]
    assert rest[-1]["status"]["state"] == "completed"
    chunks = "".join(
        part["text"]
        for frame in rest
        if frame.get("kind") == "artifact-update"
        and frame.get("metadata", {}).get("object_type") == "chat.completion.chunk"
        for part in frame["artifact"]["parts"]
    )
    assert chunks == "".join(f"t{i} " for i in range(1000))
