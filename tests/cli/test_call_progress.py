"""``trpc-bridge call --progress``: thinking on one line, each tool running then done, the
answer once and only from the run's end — against the bridge's demo agent on every
transport and against a tfrs peer built on a2a-sdk alone."""

from __future__ import annotations

import json

import pytest
from tfrs_peer import tfrs_peer

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.cli.call import run_call
from trpc_bridge.cli.progress_view import ProgressView, collapse
from trpc_bridge.codecs.tfrs import Envelope, ProgressItem, pseudo_envelope
from trpc_bridge.server import BridgeServer

DEMO = [
    "thinking: The user asks about the weather in Paris; I should call get_weather.",
    "▸ get_weather (running)",
    "✓ get_weather (done)",
    "It is 14°C in Paris.",
]


@pytest.mark.parametrize("transport", ["jsonrpc", "rest", "grpc"])
async def test_demo_agent(transport: str, capsys: pytest.CaptureFixture[str]) -> None:
    async with BridgeServer(demo_agent()) as server:
        code = await run_call(
            server.base_url, "weather in Paris", transport=transport, progress=True
        )
    assert code == 0
    assert capsys.readouterr().out.splitlines() == DEMO


async def test_a_failed_run_has_no_answer(capsys: pytest.CaptureFixture[str]) -> None:
    async with BridgeServer(demo_agent()) as server:
        assert await run_call(server.base_url, "please fail", progress=True) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["! the demo agent was asked to fail"]
    assert captured.err.startswith("error: api_error")


async def test_json_lines_carry_the_envelopes(capsys: pytest.CaptureFixture[str]) -> None:
    async with BridgeServer(demo_agent()) as server:
        assert await run_call(server.base_url, "weather", json_lines=True, progress=True) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    progress = [line["progress"] for line in lines if "progress" in line]
    assert [p["status"] for p in progress if p["kind"] == "tool_call"] == ["running", "done"]
    assert len(progress) < len(lines)  # the events are there too


async def test_tfrs_peer_that_is_not_trpc(capsys: pytest.CaptureFixture[str]) -> None:
    async with tfrs_peer() as peer:
        assert await run_call(peer.base_url, "weather?", progress=True) == 0
    assert capsys.readouterr().out.splitlines() == [
        "thinking: The user asks about the weather.",
        "▸ get_weather (running)",
        "progress: Checking the forecast service.",
        "✓ get_weather (done)",
        "progress: from the future a broken envelope plain progress line",
        "! cache miss",
        "It is 20°C in Beijing.",
    ]


def test_live_terminal_rewrites_the_collapsed_line() -> None:
    out: list[str] = []
    view = ProgressView(out.append, color=False, live=True)
    for seq, word in enumerate(("Let ", "me ", "think.")):
        view.show_progress(
            ProgressItem(Envelope(kind="thinking", seq=seq, payload={"text": word}), word)
        )
    view.show_progress(ProgressItem(pseudo_envelope("plain"), "plain"))
    view.answer("Done.")
    view.close()
    assert out == [
        "\r\x1b[Kthinking: Let",
        "\r\x1b[Kthinking: Let me",
        "\r\x1b[Kthinking: Let me think.",
        "\n",
        "\r\x1b[Kprogress: plain",
        "\n",
        "Done.\n",
    ]


def test_collapse_keeps_the_latest_words() -> None:
    assert collapse("a  b\n c", 10) == "a b c"
    assert collapse("one two three four", 10) == "…hree four"
    assert len(collapse("x" * 500, 40)) == 40
