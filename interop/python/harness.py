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
Caller = Callable[[str, str, str, str, bool], Awaitable[dict[str, Any]]]


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


async def client_loop(call: Caller) -> None:
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
