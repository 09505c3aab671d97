"""Bad REST (A2A 1.0 HTTP+JSON) requests: each gets exactly its HTTP status and AIP-193
error body (a2a-sdk's shape), never "unknown exception", while another caller's stream
runs."""

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
    pytest.mark.xdist_group("bad_input_rest"),
]

JSON_V1 = {"content-type": "application/json", "A2A-Version": "1.0"}
_MESSAGE = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}


def _body(**message: Any) -> bytes:
    return json.dumps({"message": {**_MESSAGE["message"], **message}}).encode()


def _with_push(url: str) -> bytes:
    config = {"taskPushNotificationConfig": {"url": url}}
    return json.dumps({**_MESSAGE, "configuration": config}).encode()


def _error(status: int, grpc_status: str, message: str, reason: str) -> dict[str, Any]:
    error = {"code": status, "status": grpc_status, "message": message}
    return {"error": {**error, "details": error_info(reason)}}


_SEND = "/message:send"
V1 = {"A2A-Version": "1.0"}
_STATES = (
    "one of TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_COMPLETED, TASK_STATE_FAILED, "
    "TASK_STATE_CANCELED, TASK_STATE_INPUT_REQUIRED, TASK_STATE_REJECTED, "
    "TASK_STATE_AUTH_REQUIRED"
)
_VERSION_MISSING = (
    "this is the A2A 1.0 HTTP+JSON binding: send the header 'A2A-Version: 1.0' "
    "(a request without it is A2A 0.3, which has no REST binding here)"
)

#: name → (method, path, httpx arguments, HTTP status, the exact JSON answer)
CASES: dict[str, tuple[str, str, dict[str, Any], int, dict[str, Any]]] = {
    "no A2A-Version header": (
        "POST",
        _SEND,
        {"content": _body(), "headers": {"content-type": "application/json"}},
        400,
        _error(400, "FAILED_PRECONDITION", _VERSION_MISSING, "VERSION_NOT_SUPPORTED"),
    ),
    "no A2A-Version header on a GET": (
        "GET",
        "/tasks/nope",
        {},
        400,
        _error(400, "FAILED_PRECONDITION", _VERSION_MISSING, "VERSION_NOT_SUPPORTED"),
    ),
    "unknown A2A-Version": (
        "POST",
        _SEND,
        {"content": _body(), "headers": {**JSON_V1, "A2A-Version": "9.9"}},
        400,
        _error(
            400,
            "FAILED_PRECONDITION",
            "A2A version '9.9' is not supported here: send 'A2A-Version: 1.0'",
            "VERSION_NOT_SUPPORTED",
        ),
    ),
    "invalid UTF-8": (
        "POST",
        _SEND,
        {"content": _body().replace(b'"hi"', b'"h\xffi"'), "headers": JSON_V1},
        400,
        _error(
            400,
            "INVALID_ARGUMENT",
            "body is not valid UTF-8 (byte 0xff at offset 73)",
            "INVALID_REQUEST",
        ),
    ),
    "malformed JSON": (
        "POST",
        _SEND,
        {"content": b"{not json", "headers": JSON_V1},
        400,
        _error(
            400,
            "INVALID_ARGUMENT",
            "invalid JSON: Expecting property name enclosed in double quotes at line 1 column 2",
            "INVALID_REQUEST",
        ),
    ),
    "10,000 nested arrays": (
        "POST",
        _SEND,
        {"content": b'{"a":' + b"[" * 10_000 + b"]" * 10_000 + b"}", "headers": JSON_V1},
        400,
        _error(400, "INVALID_ARGUMENT", "JSON nested too deeply to parse", "INVALID_REQUEST"),
    ),
    "lone surrogate": (
        "POST",
        _SEND,
        {"content": _body().replace(b'"hi"', b'"\\ud800"'), "headers": JSON_V1},
        400,
        _error(
            400,
            "INVALID_ARGUMENT",
            "message.parts[0].text: lone surrogate \\ud800 (not Unicode text)",
            "INVALID_PARAMS",
        ),
    ),
    "metadata nested 60 levels": (
        "POST",
        _SEND,
        {"content": _body(metadata={"a": nested(60)}), "headers": JSON_V1},
        400,
        _error(
            400,
            "INVALID_ARGUMENT",
            "message.metadata.a[0][0][0][0][0]…: nested deeper than 48 levels",
            "INVALID_PARAMS",
        ),
    ),
    "parts not a list": (
        "POST",
        _SEND,
        {"content": _body(parts="x"), "headers": JSON_V1},
        400,
        _error(400, "INVALID_ARGUMENT", "message.parts: must be a list", "INVALID_PARAMS"),
    ),
    "message without parts": (
        "POST",
        _SEND,
        {"content": _body(parts=[]), "headers": JSON_V1},
        400,
        _error(400, "INVALID_ARGUMENT", "message must have at least one part", "INVALID_PARAMS"),
    ),
    "unknown task": (
        "GET",
        "/tasks/nope",
        {"headers": {"A2A-Version": "1.0"}},
        404,
        _error(404, "NOT_FOUND", "Task nope not found", "TASK_NOT_FOUND"),
    ),
    "cancel an unknown task": (
        "POST",
        "/tasks/nope:cancel",
        {"headers": {"A2A-Version": "1.0"}},
        404,
        _error(404, "NOT_FOUND", "Task nope not found", "TASK_NOT_FOUND"),
    ),
    "ListTasks pageSize -1": (
        "GET",
        "/tasks?pageSize=-1",
        {"headers": V1},
        400,
        _error(400, "INVALID_ARGUMENT", "pageSize must be 1 to 100, not -1", "INVALID_PARAMS"),
    ),
    "ListTasks pageSize 101": (
        "GET",
        "/tasks?pageSize=101",
        {"headers": V1},
        400,
        _error(400, "INVALID_ARGUMENT", "pageSize must be 1 to 100, not 101", "INVALID_PARAMS"),
    ),
    "ListTasks pageSize not a number (no Python text)": (
        "GET",
        "/tasks?pageSize=abc",
        {"headers": V1},
        400,
        _error(
            400, "INVALID_ARGUMENT", "pageSize: must be an integer, not 'abc'", "INVALID_PARAMS"
        ),
    ),
    "ListTasks status BOGUS": (
        "GET",
        "/tasks?status=BOGUS",
        {"headers": V1},
        400,
        _error(
            400, "INVALID_ARGUMENT", f"status: unknown value 'BOGUS' ({_STATES})", "INVALID_PARAMS"
        ),
    ),
    "ListTasks historyLength -1": (
        "GET",
        "/tasks?historyLength=-1",
        {"headers": V1},
        400,
        _error(
            400, "INVALID_ARGUMENT", "historyLength must be 0 or more, not -1", "INVALID_PARAMS"
        ),
    ),
    "GetTask historyLength -1": (
        "GET",
        "/tasks/nope?historyLength=-1",
        {"headers": V1},
        400,
        _error(
            400, "INVALID_ARGUMENT", "historyLength must be 0 or more, not -1", "INVALID_PARAMS"
        ),
    ),
    "GetTask historyLength not a number": (
        "GET",
        "/tasks/nope?historyLength=1e3",
        {"headers": V1},
        400,
        _error(
            400,
            "INVALID_ARGUMENT",
            "historyLength: must be an integer, not '1e3'",
            "INVALID_PARAMS",
        ),
    ),
    "message:send with a 0.3 part (kind)": (
        "POST",
        _SEND,
        {"content": _body(parts=[{"kind": "text", "text": "hi"}]), "headers": JSON_V1},
        400,
        _error(
            400,
            "INVALID_ARGUMENT",
            "message.parts[0].kind: an A2A 0.3 key sent to A2A 1.0 (a 1.0 part is text, raw, "
            "url or data, without a kind)",
            "INVALID_PARAMS",
        ),
    ),
    "message:send with an unknown role": (
        "POST",
        _SEND,
        {"content": _body(role="ROLE_BOGUS"), "headers": JSON_V1},
        400,
        _error(
            400,
            "INVALID_ARGUMENT",
            "message.role: unknown value 'ROLE_BOGUS' (one of ROLE_USER, ROLE_AGENT)",
            "INVALID_PARAMS",
        ),
    ),
    "a 60,000-character task id": (
        "GET",
        "/tasks/" + "x" * 60_000,
        {"headers": V1},
        404,
        _error(
            404, "NOT_FOUND", f"Task {'x' * 80}… (60000 characters) not found", "TASK_NOT_FOUND"
        ),
    ),
    "a push URL with port 99999": (
        "POST",
        _SEND,
        {"content": _with_push("http://h.example.com:99999/"), "headers": JSON_V1},
        400,
        _error(
            400,
            "INVALID_ARGUMENT",
            "push notification url is not a URL with a valid port (1-65535)",
            "INVALID_PARAMS",
        ),
    ),
    "a 60 KB push URL": (
        "POST",
        _SEND,
        {"content": _with_push("http://h.example.com/" + "x" * 60_000), "headers": JSON_V1},
        400,
        _error(
            400,
            "INVALID_ARGUMENT",
            "push notification url is longer than 2048 characters",
            "INVALID_PARAMS",
        ),
    ),
    "the 0.3 REST adapter is not served": (
        "POST",
        "/v1/message:stream",
        {"content": b'{"message": 1}', "headers": {"content-type": "application/json"}},
        400,
        _error(400, "FAILED_PRECONDITION", _VERSION_MISSING, "VERSION_NOT_SUPPORTED"),
    ),
    "wrong content type": (
        "POST",
        _SEND,
        {"content": _body(), "headers": {**JSON_V1, "content-type": "text/plain"}},
        415,
        _error(
            415,
            "INVALID_ARGUMENT",
            "Content-Type must be application/json",
            "CONTENT_TYPE_NOT_SUPPORTED",
        ),
    ),
    "oversized body": (
        "POST",
        _SEND,
        {"content": b"x" * (LIMIT + 1), "headers": JSON_V1},
        413,
        {"error": {"code": 413, "message": "Payload too large"}},
    ),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_bad_request(server: BridgeServer, other_stream: RunningStream, name: str) -> None:
    method, path, request, status, answer = CASES[name]
    other_stream.check_running()
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.request(method, f"{server.rest_url}{path}", **request)
    assert response.status_code == status
    assert response.json() == answer
    other_stream.check_running()


async def test_the_other_stream_finished_intact(other_stream: RunningStream) -> None:
    await other_stream.finish()
