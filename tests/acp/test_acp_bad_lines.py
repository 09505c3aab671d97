"""Lines that are no JSON-RPC message, sent to ``trpc-bridge acp`` as a client would write
them: each is answered at once (``-32700`` with a null id for what cannot be parsed,
``-32600`` for what is no message), nothing reaches stderr but one log line at most, and
the door goes on serving the prompt that follows, whose E2A records (the wire log) echo
the prompt's JSON-RPC id."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION

TRPC_BRIDGE = Path(sys.executable).parent / "trpc-bridge"
AGENTS_DIR = Path(__file__).parent


def _nested(levels: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":9,"method":"x","params":' + b"[" * levels + b"]" * levels + b"}"


def _parse_error(why: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": f"Parse error: {why}"},
    }


def _invalid(why: str) -> dict[str, Any]:
    error = {"code": -32600, "message": f"Invalid Request: {why}"}
    return {"jsonrpc": "2.0", "id": None, "error": error}


#: line → the exact answer.
BAD_LINES: dict[bytes, dict[str, Any]] = {
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"x":"\xff"}}': (
        _parse_error("body is not valid UTF-8 (byte 0xff at offset 81)")
    ),
    b'{"jsonrpc":"2.0","id":2,"method":"session/new","par': _parse_error(
        "invalid JSON: Unterminated string starting at line 1 column 48"
    ),
    _nested(10_000): _parse_error("JSON nested too deeply to parse"),
    b'{"jsonrpc":"2.0","id":3,"method":"x","params":{"n":NaN}}': _parse_error(
        "invalid JSON: NaN, Infinity or a number out of range"
    ),
    b"[1, 2]": _invalid("the message is a batch"),
    b"42": _invalid("the message is not an object"),
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}': _invalid(
        "'id' must be a string, an integer or null"
    ),
    b'{"jsonrpc":"2.0","id":4,"method":7}': _invalid("'method' must be a string"),
    b"{}": _invalid("neither a call nor a response"),
}


class RawClient:
    """``trpc-bridge acp`` on pipes, written and read line by line."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        await self.proc.stdin.drain()

    async def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), 60)
        assert line, "the door closed its output"
        message: dict[str, Any] = json.loads(line)
        return message

    async def call(self, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request; the notifications before its answer are dropped."""
        await self.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            ).encode()
        )
        while "id" not in (message := await self.read()):
            pass
        return message


@pytest.fixture
async def door(tmp_path: Path) -> AsyncIterator[tuple[RawClient, Path]]:
    wire_log = tmp_path / "wire.jsonl"
    proc = await asyncio.create_subprocess_exec(
        str(TRPC_BRIDGE),
        "acp",
        "--agent",
        "demo",
        "--wire-log",
        str(wire_log),
        cwd=AGENTS_DIR,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,
    )
    try:
        yield RawClient(proc), wire_log
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 60)


async def test_every_bad_line_is_answered_and_the_door_keeps_serving(
    door: tuple[RawClient, Path],
) -> None:
    client, wire_log = door
    init = await client.call(0, "initialize", {"protocolVersion": PROTOCOL_VERSION})
    assert init["result"]["protocolVersion"] == PROTOCOL_VERSION
    answers = {}
    for line, _ in BAD_LINES.items():
        await client.send(line)
        answers[line] = await client.read()
    assert answers == BAD_LINES
    session = await client.call(10, "session/new", {"cwd": str(AGENTS_DIR), "mcpServers": []})
    session_id = session["result"]["sessionId"]
    prompt = [{"type": "text", "text": "weather in Paris?"}]
    answer = await client.call(11, "session/prompt", {"sessionId": session_id, "prompt": prompt})
    assert answer == {"jsonrpc": "2.0", "id": 11, "result": {"stopReason": "end_turn"}}
    records = [json.loads(line) for line in wire_log.read_text().splitlines()]
    assert records and {r["jsonrpc_id"] for r in records} == {11}
    assert records[-1]["is_final"] is True


async def test_a_line_past_the_size_bound_is_refused_unread(door: tuple[RawClient, Path]) -> None:
    client, _ = door
    huge = b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"' + b"x" * (51 * 2**20) + b'"}}'
    await client.send(huge)
    assert await client.read() == _invalid("a message longer than 52428800 bytes")
    init = await client.call(2, "initialize", {"protocolVersion": PROTOCOL_VERSION})
    assert init["id"] == 2 and "result" in init
