"""``trpc-bridge call``: live console output and exit status, against loopback peers."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from replay_server import ReplayPeer, go_sse_frame, serving
from vector_files import VECTORS

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.agents.scenarios import long_slow
from trpc_bridge.cli.call import run_call
from trpc_bridge.cli.console import ConsoleView
from trpc_bridge.codecs.trpc.decode import decode_stream
from trpc_bridge.server import BridgeServer, ServerOptions


def _c12() -> list[dict[str, object]]:
    frames: list[dict[str, object]] = json.loads((VECTORS / "C12.json").read_text())["input"]
    return frames


def test_console_shows_each_thing_once() -> None:
    out: list[str] = []
    view = ConsoleView(out.append, color=False)
    for event in decode_stream(_c12()):
        view.show(event)
    view.close()
    assert "".join(out) == (
        'Let me\n→ get_weather({"city":"Beijing"})\n← get_weather: {"temp":"20°C"}\nIt is 20°C.\n'
    )


async def test_exit_status_and_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    peer = ReplayPeer(stream_chunks=[go_sse_frame(f) for f in _c12()])
    async with serving(peer) as base:
        assert await run_call(base, "weather?", json_lines=True, user="u1") == 0
        lines = capsys.readouterr().out.splitlines()
        assert [json.loads(line)["object"] for line in lines][-1] == "chat.completion"
        peer.stream_chunks = [go_sse_frame(_c12()[0])]  # ends before the task does
        assert await run_call(base, "weather?") == 1
        assert "ended before task task-1" in capsys.readouterr().err
    assert await run_call(base, "anyone?") == 1
    assert capsys.readouterr().err.startswith("error: cannot reach")


async def test_reader_going_away_exits_quietly() -> None:
    """`trpc-bridge call … --json | head -1`: exit 0 and no traceback (the remote run is
    cancelled while the agent's connection is still open)."""
    cli = Path(sys.executable).parent / "trpc-bridge"
    async with BridgeServer(long_slow, ServerOptions()) as server:
        proc = subprocess.Popen(
            [str(cli), "call", server.base_url, "hi", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None and proc.stderr is not None
        first = await asyncio.to_thread(proc.stdout.readline)
        assert json.loads(first)["object"].startswith("preprocessing.")
        proc.stdout.close()  # the CLI's next write fails with EPIPE
        stderr = await asyncio.to_thread(proc.stderr.read)
        assert await asyncio.to_thread(proc.wait, 30) == 0
        assert b"Traceback" not in stderr, stderr.decode()


async def test_no_stream_keeps_the_reasoning_and_prints_no_empty_chunks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A unary result holds complete responses only (trpc packs each partial chunk as a
    message without content): the reasoning still shows, and ``--json`` skips those."""
    async with BridgeServer(demo_agent(), ServerOptions(grpc_port=None)) as server:
        assert await run_call(server.base_url, "weather in Paris", stream=False) == 0
        shown = capsys.readouterr().out
        assert (
            await run_call(server.base_url, "weather in Paris", stream=False, json_lines=True) == 0
        )
        lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert shown.startswith(
        "The user asks about the weather in Paris; I should call get_weather.\n"
    )
    assert "It is 14°C in Paris." in shown
    assert [line["object"] for line in lines] == [
        "chat.completion",
        "tool.response",
        "chat.completion",
    ]
    assert lines[0]["choices"][0]["message"]["reasoning_content"].startswith("The user asks")
