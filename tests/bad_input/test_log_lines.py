"""Every refused request is one log line and no traceback; a flood of them is
rate-limited, and the next line says how many were left out."""

from __future__ import annotations

import asyncio
import logging
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import pytest

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer, Limits, ServerOptions
from trpc_bridge.server.refusals import LIMIT as LOG_BUDGET
from trpc_bridge.server.refusals import install_refusal_logging
from trpc_bridge.server.refusals import log as refusal_log

from .running_stream import LIMIT
from .test_bad_agui import CASES as AGUI
from .test_bad_grpc import CASES as GRPC
from .test_bad_grpc import call_raw
from .test_bad_jsonrpc import CASES as JSONRPC
from .test_bad_rest import CASES as REST


@pytest.fixture
def every_line(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """All log records at WARNING and above, the refusal budget lifted."""
    install_refusal_logging()
    refusal_log.removeFilter(LOG_BUDGET)
    caplog.set_level(logging.WARNING)
    try:
        yield caplog
    finally:
        refusal_log.addFilter(LOG_BUDGET)


async def _one_refusal(caplog: pytest.LogCaptureFixture, name: str) -> None:
    # The line may be written just after the answer went out (gRPC logs as the call
    # ends): wait for it, bounded, then require exactly one.
    deadline = time.monotonic() + 10
    while not caplog.records and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    records = caplog.records
    assert [r.name for r in records] == ["trpc_bridge.refused"], (name, caplog.text)
    assert records[0].exc_info is None and "Traceback" not in caplog.text
    assert "\n" not in records[0].getMessage()
    caplog.clear()


async def test_one_line_per_refused_request(every_line: pytest.LogCaptureFixture) -> None:
    options = ServerOptions(limits=Limits(max_request_bytes=LIMIT))
    async with BridgeServer(demo_agent(), options) as server:
        async with httpx.AsyncClient(timeout=30) as http:
            for name, (request, _, _) in JSONRPC.items():
                await http.post(server.jsonrpc_url, **request)
                await _one_refusal(every_line, name)
            for name, (method, path, request, _, _) in REST.items():
                await http.request(method, f"{server.rest_url}{path}", **request)
                await _one_refusal(every_line, name)
            for name, (request, _, _) in AGUI.items():
                await http.post(server.agui_url, **request)
                await _one_refusal(every_line, name)
        for name, (method, raw, metadata, _, _) in GRPC.items():
            if name in ("oversized message", "metadata over 64 KiB (the request head's bound)"):
                continue  # refused by grpcio's core before any Python code runs
            with pytest.raises(grpc.aio.AioRpcError):
                await call_raw(server, method, raw, metadata)
            await _one_refusal(every_line, name)


_DROPPED = re.compile(r"\((\d+) more not logged\)$")


def test_a_flood_of_bad_requests_is_rate_limited() -> None:
    cli = Path(sys.executable).parent / "trpc-bridge"
    server = subprocess.Popen(
        [str(cli), "serve", "--port", "0", "--grpc-port", "-1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    # Its endpoint lines, printed once it listens: the URL of the port it got.
    url = next(line.split()[1] for line in server.stdout if line.startswith("JSON-RPC"))
    bad = b'{"jsonrpc": "2.0", "id": 1, "method": "\xff"}'
    headers = {"content-type": "application/json"}
    try:
        with httpx.Client(timeout=30) as http:
            for _ in range(300):
                try:
                    http.get(f"{url}.well-known/agent-card.json").raise_for_status()
                    break
                except httpx.HTTPError:
                    time.sleep(0.05)
            for _ in range(300):
                assert (
                    http.post(url, content=bad, headers=headers).json()["error"]["code"] == -32700
                )
            time.sleep(1.0)  # the budget refills
            http.post(url, content=bad, headers=headers)
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    lines = stderr.strip().splitlines()
    assert "Traceback" not in stderr
    assert all(line.startswith("refused POST / from 127.0.0.1:") for line in lines), stderr
    # The budget: a burst of 20, then 5 a second for as long as the flood lasted.
    assert 20 <= len(lines) < 120, len(lines)
    # Nothing vanishes unsaid: each refusal was logged or counted on a later line (the
    # request after the pause is logged, with what was dropped since the last line).
    dropped = [int(m.group(1)) for line in lines if (m := _DROPPED.search(line))]
    assert dropped
    assert len(lines) + sum(dropped) == 301, (len(lines), dropped)
