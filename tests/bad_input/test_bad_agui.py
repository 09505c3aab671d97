"""Bad ``POST /agui`` requests: each gets exactly its HTTP 400 and JSON error (what is
wrong and where: the strict JSON reader's sentence, or pydantic's location in
``RunAgentInput``), while another caller's stream runs."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from trpc_bridge.server import BridgeServer

from .running_stream import LIMIT, RunningStream

# One server and one running stream for the module, checked by its last test: the module
# runs whole, in order, in one pytest-xdist worker.
pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.xdist_group("bad_input_agui"),
]

JSON = {"content-type": "application/json"}
_INPUT = {
    "threadId": "t",
    "runId": "r",
    "messages": [{"id": "u1", "role": "user", "content": "hi"}],
}


def _body(**changes: Any) -> bytes:
    return json.dumps({**_INPUT, **changes}).encode()


def _invalid(kind: str, loc: list[Any], msg: str) -> dict[str, Any]:
    return {"error": "invalid RunAgentInput", "detail": [{"type": kind, "loc": loc, "msg": msg}]}


#: name → (httpx.post arguments, HTTP status, the exact JSON answer)
CASES: dict[str, tuple[dict[str, Any], int, dict[str, Any]]] = {
    "malformed JSON": (
        {"content": b"{x", "headers": JSON},
        400,
        {
            "error": "invalid JSON: Expecting property name enclosed in double quotes "
            "at line 1 column 2"
        },
    ),
    "empty body": (
        {"content": b"", "headers": JSON},
        400,
        {"error": "invalid JSON: Expecting value at line 1 column 1"},
    ),
    "invalid UTF-8": (
        {"content": _body().replace(b'"hi"', b'"h\xffi"'), "headers": JSON},
        400,
        {"error": "body is not valid UTF-8 (byte 0xff at offset 87)"},
    ),
    "lone surrogate": (
        {"content": _body().replace(b'"hi"', b'"\\ud800"'), "headers": JSON},
        400,
        {"error": "messages[0].content: lone surrogate \\ud800 (not Unicode text)"},
    ),
    "10,000 nested arrays": (
        {
            "content": _body(state=None).replace(b"null", b"[" * 10_000 + b"]" * 10_000),
            "headers": JSON,
        },
        400,
        {"error": "JSON nested too deeply to parse"},
    ),
    "no messages": (
        {"content": json.dumps({"threadId": "t", "runId": "r"}).encode(), "headers": JSON},
        400,
        _invalid("missing", ["messages"], "Field required"),
    ),
    "a message of unknown role": (
        {
            "content": _body(messages=[{"id": "u1", "role": "boss", "content": "hi"}]),
            "headers": JSON,
        },
        400,
        _invalid(
            "union_tag_invalid",
            ["messages", 0],
            "Input tag 'boss' found using 'role' does not match any of the expected tags: "
            "'developer', 'system', 'assistant', 'user', 'tool', 'activity', 'reasoning'",
        ),
    ),
    "threadId of 60,000 characters": (
        {"content": _body(threadId="t" * 60_000), "headers": JSON},
        400,
        {"error": "threadId is longer than 255 characters"},
    ),
    "runId over 255 characters": (
        {"content": _body(runId="r" * 256), "headers": JSON},
        400,
        {"error": "runId is longer than 255 characters"},
    ),
    "no user message (an empty list)": (
        {"content": _body(messages=[]), "headers": JSON},
        400,
        {"error": "messages hold no user message: the agent would be asked nothing"},
    ),
    "no user message (only the assistant's)": (
        {
            "content": _body(messages=[{"id": "a1", "role": "assistant", "content": "hi"}]),
            "headers": JSON,
        },
        400,
        {"error": "messages hold no user message: the agent would be asked nothing"},
    ),
    "X-User-ID too long": (
        {"content": _body(), "headers": {**JSON, "X-User-ID": "u" * 256}},
        400,
        {"error": "X-User-ID is longer than 255 characters"},
    ),
    "oversized body": (
        {"content": _body(padding="x" * LIMIT), "headers": JSON},
        413,
        {"error": {"code": 413, "message": "Payload too large"}},
    ),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_bad_request(server: BridgeServer, other_stream: RunningStream, name: str) -> None:
    request, status, answer = CASES[name]
    other_stream.check_running()
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(server.agui_url, **request)
    assert response.status_code == status
    assert response.json() == answer
    other_stream.check_running()


async def test_the_other_stream_finished_intact(other_stream: RunningStream) -> None:
    await other_stream.finish()
