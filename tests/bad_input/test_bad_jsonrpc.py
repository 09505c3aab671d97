"""Bad JSON-RPC requests (A2A 0.3 and 1.0 on one URL): each gets exactly its answer —
the JSON-RPC 2.0 / A2A code, a message that names the problem and never Python's text,
the request's id when it had a valid one — while another caller's stream runs."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from trpc_bridge.server import BridgeServer

from .running_stream import LIMIT, RunningStream, error_info, nested

# One server and one running stream for the module, checked by its last test: the module
# runs whole, in order, in one pytest-xdist worker.
pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.xdist_group("bad_input_jsonrpc"),
]

JSON = {"content-type": "application/json"}
V1 = {"A2A-Version": "1.0"}


def _msg(**changes: Any) -> dict[str, Any]:
    message = {
        "kind": "message",
        "messageId": "m1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
    }
    message.update(changes)
    return message


def _rpc(method: str, params: Any = None, **envelope: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        body["params"] = params
    body.update(envelope)
    return body


def _raw(body: dict[str, Any], old: bytes, new: bytes) -> bytes:
    """``body`` as JSON with ``old`` replaced by ``new`` (bytes json cannot write)."""
    encoded = json.dumps(body).encode()
    assert old in encoded
    return encoded.replace(old, new)


def edge_info(reason: str) -> dict[str, Any]:
    """The ErrorInfo of an answer of the bridge's HTTP edge (``server/auth/answers.py``)."""
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "trpc-bridge",
    }


def _error(code: int, message: str, rpc_id: Any = 1, **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "error": {"code": code, "message": message, **extra}}


def _v03_send(text_part: bytes) -> bytes:
    return _raw(_rpc("message/send", {"message": _msg()}), b'"hi"', text_part)


_V1_MESSAGE = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
_STATES = (
    "one of TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_COMPLETED, TASK_STATE_FAILED, "
    "TASK_STATE_CANCELED, TASK_STATE_INPUT_REQUIRED, TASK_STATE_REJECTED, "
    "TASK_STATE_AUTH_REQUIRED"
)

#: name → (httpx.post arguments, HTTP status, the exact JSON answer; None: no body)
CASES: dict[str, tuple[dict[str, Any], int, dict[str, Any] | None]] = {
    # --- not JSON text: -32700, id null (the id cannot be read) ---
    "invalid UTF-8": (
        {"content": _v03_send(b'"h\xffi"'), "headers": JSON},
        200,
        _error(-32700, "Parse error: body is not valid UTF-8 (byte 0xff at offset 168)", None),
    ),
    "10,000 nested arrays": (
        {"content": b'{"a":' + b"[" * 10_000 + b"]" * 10_000 + b"}", "headers": JSON},
        200,
        _error(-32700, "Parse error: JSON nested too deeply to parse", None),
    ),
    "malformed JSON": (
        {"content": b"{not json", "headers": JSON},
        200,
        _error(
            -32700,
            "Parse error: invalid JSON: Expecting property name enclosed in double quotes "
            "at line 1 column 2",
            None,
        ),
    ),
    "empty body": (
        {"content": b"", "headers": JSON},
        200,
        _error(-32700, "Parse error: invalid JSON: Expecting value at line 1 column 1", None),
    ),
    "NaN": (
        {"content": _raw(_rpc("tasks/get", {"id": "x"}), b'"x"', b"NaN"), "headers": JSON},
        200,
        _error(-32700, "Parse error: invalid JSON: NaN, Infinity or a number out of range", None),
    ),
    "a 5,000-digit number": (
        {"content": _raw(_rpc("tasks/get", {"id": "x"}), b'"x"', b"9" * 5000), "headers": JSON},
        200,
        _error(-32700, "Parse error: invalid JSON: NaN, Infinity or a number out of range", None),
    ),
    # --- not a JSON-RPC request: -32600 ---
    "batch request": (
        {"json": [_rpc("tasks/get", {"id": "x"})]},
        200,
        _error(-32600, "Invalid Request: batch requests are not supported", None),
    ),
    "body is a string": (
        {"json": "tasks/get"},
        200,
        _error(-32600, "Invalid Request: the body must be a JSON object", None),
    ),
    "jsonrpc version 1.0": (
        {"json": _rpc("tasks/get", {"id": "x"}, jsonrpc="1.0")},
        200,
        _error(-32600, "Invalid Request: 'jsonrpc' must be exactly \"2.0\""),
    ),
    "boolean id": (
        {"json": _rpc("tasks/get", {"id": "x"}, id=True)},
        200,
        _error(-32600, "Invalid Request: 'id' must be a string, an integer or null", None),
    ),
    "id with a lone surrogate": (
        {
            "content": _raw(_rpc("tasks/get", {"id": "x"}, id="i"), b'"i"', b'"\\udc00"'),
            "headers": JSON,
        },
        200,
        _error(-32600, "Invalid Request: 'id' is not Unicode text", None),
    ),
    "missing method": (
        {"json": {"jsonrpc": "2.0", "id": 1, "params": {}}},
        200,
        _error(-32600, "Invalid Request: 'method' must be a non-empty string"),
    ),
    "method is a number": (
        {"json": {"jsonrpc": "2.0", "id": 1, "method": 7, "params": {}}},
        200,
        _error(-32600, "Invalid Request: 'method' must be a non-empty string"),
    ),
    "params is a string": (
        {"json": _rpc("tasks/get", "x")},
        200,
        _error(-32600, "Invalid Request: 'params' must be an object"),
    ),
    "unknown envelope member": (
        {"json": _rpc("message/send", {"message": _msg()}, extra=1)},
        200,
        _error(
            -32600,
            "Invalid Request: unknown member 'extra' (a request has only jsonrpc, id, method"
            " and params)",
        ),
    ),
    # --- a notification: no answer at all ---
    "notification (0.3)": (
        {"json": {"jsonrpc": "2.0", "method": "tasks/cancel", "params": {"id": "x"}}},
        204,
        None,
    ),
    "notification (1.0)": (
        {"json": {"jsonrpc": "2.0", "method": "CancelTask", "params": {"id": "x"}}, "headers": V1},
        204,
        None,
    ),
    # --- methods and versions ---
    "unknown method": (
        {"json": _rpc("foo/bar", {})},
        200,
        _error(-32601, "Method not found: 'foo/bar'"),
    ),
    "1.0 method without A2A-Version": (
        {"json": _rpc("GetTask", {"id": "x"})},
        200,
        _error(-32009, "GetTask is an A2A 1.0 method: send the header 'A2A-Version: 1.0'"),
    ),
    "0.3 method with A2A-Version 1.0": (
        {"json": _rpc("tasks/get", {"id": "x"}), "headers": V1},
        200,
        _error(
            -32009,
            "tasks/get is an A2A 0.3 method but A2A-Version is '1.0': use the 1.0 method "
            "name, or send no A2A-Version header",
        ),
    ),
    "unknown A2A-Version": (
        {"json": _rpc("GetTask", {"id": "x"}), "headers": {"A2A-Version": "9.9"}},
        200,
        _error(
            -32009,
            "A2A version '9.9' is not supported: send 'A2A-Version: 1.0' for A2A 1.0, "
            "or no A2A-Version header for 0.3",
        ),
    ),
    # --- params: -32602 naming the field ---
    "missing params (0.3)": (
        {"json": _rpc("message/send")},
        200,
        _error(-32602, "Invalid params: message/send needs params"),
    ),
    "missing params (1.0)": (
        {"json": _rpc("SendMessage"), "headers": V1},
        200,
        _error(-32602, "Invalid params: SendMessage needs params"),
    ),
    "params is an array": (
        {"json": _rpc("message/send", [1])},
        200,
        _error(
            -32602,
            "Invalid params: 'params' must be an object of named parameters, not an array",
        ),
    ),
    "lone surrogate in the text": (
        {"content": _v03_send(b'"\\ud800"'), "headers": JSON},
        200,
        _error(
            -32602,
            "Invalid params: params.message.parts[0].text: lone surrogate \\ud800 "
            "(not Unicode text)",
        ),
    ),
    "metadata nested 60 levels": (
        {"json": _rpc("message/send", {"message": _msg(metadata={"a": nested(60)})})},
        200,
        _error(
            -32602,
            "Invalid params: params.message.metadata.a[0][0][0][0][0]…: nested deeper than "
            "48 levels",
        ),
    ),
    "unknown part kind": (
        {"json": _rpc("message/send", {"message": _msg(parts=[{"kind": "video"}])})},
        200,
        _error(
            -32602,
            "Invalid params: params.message.parts[0]: matches none of DataPart, FilePart, TextPart",
        ),
    ),
    "missing messageId": (
        {"json": _rpc("message/send", {"message": _msg(messageId=None)})},
        200,
        _error(-32602, "Invalid params: params.message.messageId: Input should be a valid string"),
    ),
    "unknown role": (
        {"json": _rpc("message/send", {"message": _msg(role="boss")})},
        200,
        _error(-32602, "Invalid params: params.message.role: Input should be 'agent' or 'user'"),
    ),
    "file bytes not base64": (
        {
            "json": _rpc(
                "message/send", {"message": _msg(parts=[{"kind": "file", "file": {"bytes": "xx"}}])}
            )
        },
        200,
        _error(-32602, "Invalid params: a file part's bytes are not valid base64"),
    ),
    "1.0 parts not a list": (
        {
            "json": _rpc(
                "SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "parts": "x"}}
            ),
            "headers": V1,
        },
        200,
        _error(-32602, "Invalid params: params.message.parts: must be a list"),
    ),
    "message without parts (0.3)": (
        {"json": _rpc("message/send", {"message": _msg(parts=[])})},
        200,
        _error(-32602, "message must have at least one part", data=None),
    ),
    "message without parts (1.0)": (
        {
            "json": _rpc(
                "SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}
            ),
            "headers": V1,
        },
        200,
        _error(-32602, "message must have at least one part", data=error_info("INVALID_PARAMS")),
    ),
    "contextId too long for the task store": (
        {"json": _rpc("message/send", {"message": _msg(contextId="c" * 256)})},
        200,
        _error(-32602, "contextId is longer than 255 characters", data=None),
    ),
    # Refused by the HTTP edge before the body is read: no id to echo (server/auth).
    "X-User-ID too long for the task store": (
        {"json": _rpc("message/send", {"message": _msg()}), "headers": {"X-User-ID": "u" * 256}},
        400,
        _error(
            -32600,
            "X-User-ID is longer than 255 characters",
            None,
            data=[edge_info("INVALID_REQUEST")],
        ),
    ),
    "X-User-ID sent twice": (
        {
            "json": _rpc("message/send", {"message": _msg()}),
            "headers": [("X-User-ID", "alice"), ("X-User-ID", "bob")],
        },
        400,
        _error(
            -32600,
            "the x-user-id header is sent more than once",
            None,
            data=[edge_info("INVALID_REQUEST")],
        ),
    ),
    # --- tasks that are not there ---
    "unknown task id": (
        {"json": _rpc("tasks/get", {"id": "nope"})},
        200,
        _error(-32001, "Task nope not found", data=None),
    ),
    "cancel an unknown task (1.0)": (
        {"json": _rpc("CancelTask", {"id": "nope"}), "headers": V1},
        200,
        _error(-32001, "Task nope not found", data=error_info("TASK_NOT_FOUND")),
    ),
    "message for an unknown task": (
        {"json": _rpc("message/send", {"message": _msg(taskId="nope")})},
        200,
        _error(-32001, "Task nope not found", data=None),
    ),
    # --- ListTasks paging and history (1.0) ---
    "ListTasks pageSize -1": (
        {"json": _rpc("ListTasks", {"pageSize": -1}), "headers": V1},
        200,
        _error(-32602, "pageSize must be 1 to 100, not -1", data=error_info("INVALID_PARAMS")),
    ),
    "ListTasks pageSize 0": (
        {"json": _rpc("ListTasks", {"pageSize": 0}), "headers": V1},
        200,
        _error(-32602, "pageSize must be 1 to 100, not 0", data=error_info("INVALID_PARAMS")),
    ),
    "ListTasks pageSize 101": (
        {"json": _rpc("ListTasks", {"pageSize": 101}), "headers": V1},
        200,
        _error(-32602, "pageSize must be 1 to 100, not 101", data=error_info("INVALID_PARAMS")),
    ),
    "ListTasks pageSize not a number": (
        {"json": _rpc("ListTasks", {"pageSize": "abc"}), "headers": V1},
        200,
        _error(-32602, "Invalid params: params.pageSize: must be an integer, not 'abc'"),
    ),
    "ListTasks status BOGUS": (
        {"json": _rpc("ListTasks", {"status": "BOGUS"}), "headers": V1},
        200,
        _error(-32602, f"Invalid params: params.status: unknown value 'BOGUS' ({_STATES})"),
    ),
    "ListTasks historyLength -1": (
        {"json": _rpc("ListTasks", {"historyLength": -1}), "headers": V1},
        200,
        _error(
            -32602, "historyLength must be 0 or more, not -1", data=error_info("INVALID_PARAMS")
        ),
    ),
    "ListTasks page token not issued here": (
        {"json": _rpc("ListTasks", {"pageToken": "x" * 5000}), "headers": V1},
        200,
        _error(
            -32602,
            "pageToken is not one this server issued: start without it",
            data=error_info("INVALID_PARAMS"),
        ),
    ),
    "GetTask historyLength -1": (
        {"json": _rpc("GetTask", {"id": "nope", "historyLength": -1}), "headers": V1},
        200,
        _error(
            -32602, "historyLength must be 0 or more, not -1", data=error_info("INVALID_PARAMS")
        ),
    ),
    "tasks/get historyLength -1 (0.3)": (
        {"json": _rpc("tasks/get", {"id": "nope", "historyLength": -1})},
        200,
        _error(-32602, "historyLength must be 0 or more, not -1", data=None),
    ),
    "SendMessage historyLength -1": (
        {
            "json": _rpc(
                "SendMessage",
                {"message": _V1_MESSAGE, "configuration": {"historyLength": -1}},
            ),
            "headers": V1,
        },
        200,
        _error(
            -32602, "historyLength must be 0 or more, not -1", data=error_info("INVALID_PARAMS")
        ),
    ),
    # --- a 1.0 message in A2A 0.3's shape (other unknown keys are ignored: §5.7) ---
    "SendMessage with a 0.3 part (kind)": (
        {
            "json": _rpc(
                "SendMessage",
                {"message": {**_V1_MESSAGE, "parts": [{"kind": "text", "text": "hi"}]}},
            ),
            "headers": V1,
        },
        200,
        _error(
            -32602,
            "Invalid params: params.message.parts[0].kind: an A2A 0.3 key sent to A2A 1.0 "
            "(a 1.0 part is text, raw, url or data, without a kind)",
        ),
    ),
    "SendMessage with a 0.3 file part": (
        {
            "json": _rpc(
                "SendMessage",
                {"message": {**_V1_MESSAGE, "parts": [{"file": {"uri": "https://x.test/a"}}]}},
            ),
            "headers": V1,
        },
        200,
        _error(
            -32602,
            "Invalid params: params.message.parts[0].file: an A2A 0.3 key sent to A2A 1.0 "
            "(a 1.0 file part is url or raw, with filename and mediaType)",
        ),
    ),
    "SendMessage with 0.3's blocking": (
        {
            "json": _rpc(
                "SendMessage",
                {"message": _V1_MESSAGE, "configuration": {"blocking": False}},
            ),
            "headers": V1,
        },
        200,
        _error(
            -32602,
            "Invalid params: params.configuration.blocking: an A2A 0.3 key sent to A2A 1.0 "
            "(1.0 says returnImmediately, its opposite)",
        ),
    ),
    "SendMessage with an unknown role": (
        {"json": _rpc("SendMessage", {"message": {**_V1_MESSAGE, "role": "user"}}), "headers": V1},
        200,
        _error(
            -32602,
            "Invalid params: params.message.role: unknown value 'user' (one of ROLE_USER, "
            "ROLE_AGENT)",
        ),
    ),
    # --- echoes are bounded ---
    "a 60,000-character task id": (
        {"json": _rpc("GetTask", {"id": "x" * 60_000}), "headers": V1},
        200,
        _error(
            -32001,
            f"Task {'x' * 80}… (60000 characters) not found",
            data=error_info("TASK_NOT_FOUND"),
        ),
    ),
    "a key of 60,000 characters in a path": (
        {
            "content": _raw(
                _rpc("SendMessage", {"message": {**_V1_MESSAGE, "metadata": {"k" * 60_000: "s"}}}),
                b'"s"',
                b'"\\ud800"',
            ),
            "headers": {**JSON, **V1},
        },
        200,
        _error(
            -32602,
            f"Invalid params: params.message.metadata.{'k' * 39}…: lone surrogate \\ud800 "
            "(not Unicode text)",
        ),
    ),
    "a push URL with port 99999": (
        {
            "json": _rpc(
                "SendMessage",
                {
                    "message": _V1_MESSAGE,
                    "configuration": {
                        "taskPushNotificationConfig": {"url": "http://hooks.example.com:99999/"}
                    },
                },
            ),
            "headers": V1,
        },
        200,
        _error(
            -32602,
            "push notification url is not a URL with a valid port (1-65535)",
            data=error_info("INVALID_PARAMS"),
        ),
    ),
    "a 60 KB push URL": (
        {
            "json": _rpc(
                "SendMessage",
                {
                    "message": _V1_MESSAGE,
                    "configuration": {
                        "taskPushNotificationConfig": {
                            "url": "http://hooks.example.com/" + "x" * 60_000
                        }
                    },
                },
            ),
            "headers": V1,
        },
        200,
        _error(
            -32602,
            "push notification url is longer than 2048 characters",
            data=error_info("INVALID_PARAMS"),
        ),
    ),
    # --- HTTP-level refusals on the JSON-RPC URL ---
    "wrong content type": (
        {
            "content": json.dumps(_rpc("tasks/get", {"id": "x"})).encode(),
            "headers": {"content-type": "text/plain"},
        },
        415,
        _error(-32005, "Content-Type must be application/json", None),
    ),
    "oversized body": (
        {
            "json": _rpc(
                "message/send", {"message": _msg(parts=[{"kind": "text", "text": "x" * LIMIT}])}
            )
        },
        413,
        _error(-32600, "Payload too large", None),
    ),
}


async def _post(server: BridgeServer, request: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.post(server.jsonrpc_url, **request)


@pytest.mark.parametrize("name", list(CASES))
async def test_bad_request(server: BridgeServer, other_stream: RunningStream, name: str) -> None:
    request, status, answer = CASES[name]
    other_stream.check_running()
    response = await _post(server, request)
    assert response.status_code == status
    if answer is None:
        assert response.content == b""
    else:
        assert response.json() == answer
    other_stream.check_running()


async def test_the_other_stream_finished_intact(other_stream: RunningStream) -> None:
    await other_stream.finish()
