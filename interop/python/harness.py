"""What both framework peers share and no framework provides: serving several scenario
apps from one process, and answering calls read from stdin.

A peer process takes seconds to import its framework (more on a loaded 2-core machine),
so the tests start one server process for every scenario and one client process for
every call, instead of one process per scenario or per call.

Protocol (JSON lines):
- ``serve``: stdout ``READY <scenario> <url>`` per scenario, then ``READY all``; serves
  until stdin closes (the process that started it ended).
- ``client``: stdin ``{"url", "message", "user", "session", "stream"}`` per call; stdout
  one line per call, ``{"events": [...], "session": [...]}`` or ``{"error": "..."}``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn

#: Builds the ASGI app of one scenario, given the URL the app will be reached at.
AppBuilder = Callable[[str, str], Awaitable[Any]]
#: Runs one call: (url, message, user, session, stream) → {"events", "session"}.
CallPeer = Callable[[str, str, str, str, bool], Awaitable[dict[str, Any]]]


def _bound_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


async def serve_all(scenarios: list[str], build: AppBuilder) -> None:
    """One uvicorn server per scenario on its own loopback port (ports bound first)."""
    servers = []
    for scenario in scenarios:
        sock = _bound_socket()
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
        app = await build(scenario, url)
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        servers.append(uvicorn.Server(config).serve(sockets=[sock]))
        print(f"READY {scenario} {url}", flush=True)
    print("READY all", flush=True)
    serving = asyncio.gather(*servers)
    await _stdin_closed()
    serving.cancel()  # the test (our parent) is gone or done: stop with it
    os._exit(0)


async def _stdin_closed() -> None:
    loop = asyncio.get_running_loop()
    while await loop.run_in_executor(None, sys.stdin.readline):
        pass


async def client_loop(call: CallPeer) -> None:
    """Answer one call per stdin line until stdin closes."""
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:  # the test is done (or gone): frameworks may leave threads behind
            os._exit(0)
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            answer = await call(
                request["url"],
                request.get("message", "hi"),
                request.get("user", "peer-user"),
                request.get("session", "peer-session"),
                bool(request.get("stream", True)),
            )
        except Exception as exc:  # reported to the test, which fails the cell with it
            answer = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()}
        print(json.dumps(answer, ensure_ascii=False, sort_keys=True), flush=True)


async def run_turn(
    runner: Any,
    sessions: Any,
    *,
    app_name: str,
    user: str,
    session: str,
    new_message: Any,
    record: Callable[[Any], dict[str, Any]],
) -> dict[str, Any]:
    """One turn through a framework's ``Runner``: the events it yields and what its
    session service kept afterwards (the caller's history), both recorded."""
    events = [
        record(event)
        async for event in runner.run_async(
            user_id=user, session_id=session, new_message=new_message
        )
    ]
    stored = await sessions.get_session(app_name=app_name, user_id=user, session_id=session)
    kept = [record(e) for e in (stored.events if stored else []) if e.author != "user"]
    return {"events": events, "session": kept}


# --- what both frameworks' genai-style types share (duck-typed: two different installs) --


def step_index(contents: Any) -> int:
    """The scripted model's step: model turns after the last user *text* turn (function
    responses are user turns in genai), as the Go peer counts them."""
    step = 0
    for content in contents:
        if content.role == "user" and any(p.text for p in content.parts or []):
            step = 0
        elif content.role == "model":
            step += 1
    return step


def part_record(part: Any) -> dict[str, Any]:
    """One genai part as the test reads it."""
    if part.function_call:
        call = part.function_call
        return {"function_call": {"id": call.id, "name": call.name, "args": call.args}}
    if part.function_response:
        response = part.function_response
        data = {"id": response.id, "name": response.name, "response": response.response}
        return {"function_response": data}
    if part.executable_code:
        return {"code": part.executable_code.code}
    if part.code_execution_result:
        return {"code_result": part.code_execution_result.output}
    if part.thought:
        return {"thought": part.text or ""}
    if part.inline_data is not None:
        return {"inline_data": (part.inline_data.data or b"").decode(errors="replace")}
    return {"text": part.text or ""}


def event_record(event: Any, id_key: str, event_id: str) -> dict[str, Any]:
    """What a framework user sees of one event: its id (under ``id_key``), ``partial``,
    its parts, its error."""
    parts = event.content.parts if event.content and event.content.parts else []
    record: dict[str, Any] = {
        id_key: event_id,
        "partial": bool(event.partial),
        "parts": [part_record(p) for p in parts],
    }
    if event.error_code or event.error_message:
        record["error"] = {"code": event.error_code, "message": event.error_message}
    return record
