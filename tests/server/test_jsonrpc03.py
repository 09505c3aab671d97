"""The bridge's own 0.3 ``message/stream`` / ``message/send`` answers exactly as a2a-sdk's
dispatcher.

The same handler is served twice: by ``BridgeServer``'s app (the JSON-RPC endpoint with
:class:`Jsonrpc03Methods`) and by the same endpoint without them (every call that passes
the parse goes to the SDK's dispatcher). Every request below goes to both; the SSE frames
and JSON bodies must be the same, with the same key order (Struct maps — metadata, data — compared
as maps: their iteration order is per protobuf copy) once generated ids and timestamps
are normalised. Requests answered before them (other versions, malformed ones) must of
course come out identical too.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from ordered_json import ordered_json
from starlette.applications import Starlette

from trpc_bridge.agents.scenarios import SCRIPTS, ScenarioAgent
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.a2a.jsonrpc_route import jsonrpc_routes

from .helpers import GO_HEADERS, go_message, jsonrpc

#: Generated ids (uuids, hex event ids, unary task ids' nanoseconds) and timestamps.
_GENERATED = re.compile(
    r"((task|ctx|msg)-)?[0-9a-f]{8}-[0-9a-f-]{27}|[0-9a-f]{32}|\d{16,}"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"
)


def _frames(body: str) -> list[Any]:
    frames = []
    for line in _GENERATED.sub("<id>", body).splitlines():
        if line.startswith("data:"):
            frames.append(ordered_json(line[5:]))
    return frames


def _json(body: str) -> Any:
    return ordered_json(_GENERATED.sub("<id>", body))


async def _both(agent: ScenarioAgent, **request: Any) -> tuple[httpx.Response, httpx.Response]:
    server = BridgeServer(agent, ServerOptions(grpc_port=None, public_url="http://bridge"))
    sdk = Starlette(routes=jsonrpc_routes(server.handler, ["/"]))
    responses = []
    for app in (server.starlette_app(), sdk):
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://bridge"
        ) as http:
            responses.append(await http.post("/", **request))
    return responses[0], responses[1]


def _stream(message: dict[str, Any], rpc_id: str | int = "r1") -> dict[str, Any]:
    return jsonrpc("message/stream", {"message": message}, rpc_id=rpc_id)


def _send(message: dict[str, Any], rpc_id: str | int = "r1") -> dict[str, Any]:
    return jsonrpc("message/send", {"message": message}, rpc_id=rpc_id)


@pytest.mark.parametrize("scenario", sorted(SCRIPTS))
@pytest.mark.parametrize("rpc_id", ["r1", 42])
async def test_scenario_streams_are_identical(scenario: str, rpc_id: str | int) -> None:
    agent = ScenarioAgent(scenario, SCRIPTS[scenario])
    ours, sdk = await _both(agent, json=_stream(go_message("hi"), rpc_id), headers=GO_HEADERS)
    assert ours.status_code == sdk.status_code == 200
    assert ours.headers["content-type"] == sdk.headers["content-type"]
    assert _frames(ours.text) == _frames(sdk.text)
    assert len(_frames(ours.text)) > 2


def _dialect_message(caller: str) -> dict[str, Any]:
    """The Go client's message as trpc-agent-python's or ADK's client marks it (see
    ``codecs/dialects/detect.py``), or without trpc metadata (a plain A2A caller)."""
    message = go_message("hi")
    if caller == "trpc-python":
        message["metadata"] = dict(message["metadata"], object_type="chat.completion")
    elif caller == "adk":
        message["parts"] = [dict(p, metadata={"is_user_input": True}) for p in message["parts"]]
    else:
        del message["metadata"]
    return message


@pytest.mark.parametrize("scenario", ["long", "reasoning", "tool"])
@pytest.mark.parametrize("caller", ["trpc-python", "adk", "plain"])
async def test_every_callers_encoding_streams_identically(scenario: str, caller: str) -> None:
    """Encodings that rewrite trpc's frames (the dialects) or build their own (plain)."""
    agent = ScenarioAgent(scenario, SCRIPTS[scenario])
    ours, sdk = await _both(agent, json=_stream(_dialect_message(caller)), headers=GO_HEADERS)
    assert ours.status_code == sdk.status_code == 200
    assert _frames(ours.text) == _frames(sdk.text)


@pytest.mark.parametrize("scenario", sorted(SCRIPTS))
async def test_scenario_unary_results_are_identical(scenario: str) -> None:
    agent = ScenarioAgent(scenario, SCRIPTS[scenario])
    ours, sdk = await _both(agent, json=_send(go_message("hi"), 7), headers=GO_HEADERS)
    assert ours.status_code == sdk.status_code == 200
    assert ours.headers["content-type"] == sdk.headers["content-type"]
    assert _json(ours.text) == _json(sdk.text)


CASES: dict[str, dict[str, Any]] = {
    "follow-up to an unknown task (error frame in the stream)": {
        "json": _stream(dict(go_message("hi"), taskId="task-nope"))
    },
    "message without parts (error frame)": {"json": _stream(dict(go_message("hi"), parts=[]))},
    "A2A-Version 1.0 on a 0.3 method": {
        "json": _stream(go_message("hi")),
        "headers": {"A2A-Version": "1.0"},
    },
    "params not a message": {"json": jsonrpc("message/stream", {"message": {"kind": "x"}})},
    "id is a boolean": {"json": _stream(go_message("hi"), rpc_id=True)},
    "no id": {"json": {"jsonrpc": "2.0", "method": "message/stream", "params": {}}},
    "extra envelope key": {"json": dict(_stream(go_message("hi")), extra=1)},
    "1.0 method": {
        "json": jsonrpc("SendStreamingMessage", {"message": {"messageId": "m", "parts": []}}),
        "headers": {"A2A-Version": "1.0"},
    },
    "malformed JSON": {"content": b"{nope", "headers": {"content-type": "application/json"}},
    "send: follow-up to an unknown task": {"json": _send(dict(go_message("hi"), taskId="x"))},
    "send: message without parts": {"json": _send(dict(go_message("hi"), parts=[]))},
    "send: A2A-Version 1.0": {"json": _send(go_message("hi")), "headers": {"A2A-Version": "1.0"}},
    "send: params not a message": {"json": jsonrpc("message/send", {"message": [1]})},
}


@pytest.mark.parametrize("case", CASES)
async def test_other_requests_are_answered_as_the_sdk_does(case: str) -> None:
    agent = ScenarioAgent("text", SCRIPTS["text"])
    ours, sdk = await _both(agent, **CASES[case])
    assert ours.status_code == sdk.status_code
    assert ours.headers.get("content-type") == sdk.headers.get("content-type")
    if ours.status_code == 204:  # a notification: no answer
        assert ours.content == sdk.content == b""
    elif ours.headers["content-type"].startswith("text/event-stream"):
        assert _frames(ours.text) == _frames(sdk.text)
    else:
        assert _json(ours.text) == _json(sdk.text)
