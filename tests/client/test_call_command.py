"""``trpc-bridge call``: live console output and exit status, against loopback peers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from replay_server import ReplayPeer, go_sse_frame, serving

from trpc_bridge.client.call_command import run_call
from trpc_bridge.client.console import ConsoleView
from trpc_bridge.codecs.trpc_decode import decode_stream

VECTORS = Path(__file__).parent.parent / "vectors"


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
