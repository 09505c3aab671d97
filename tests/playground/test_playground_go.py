"""The playground in a real browser watching a Go agent: trpc-agent-go's A2A server (the
Go peer, scenario ``reasoning_tool``) behind ``trpc-bridge proxy``, both as processes the
way a person would run them. The proxy runs without tracing, so the page must say that no
trace was recorded rather than show an id.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from peers import SKIP_NO_GO, TRPC_BRIDGE, build_gopeer, go_available, go_server, running

from .browser import playground_browser, read_run

#: One headless Chromium at a time: the browser tests share a pytest-xdist worker.
pytestmark = pytest.mark.xdist_group("browser")


@pytest.fixture(scope="module")
def gopeer() -> Iterator[Path]:
    if not go_available():
        pytest.skip(SKIP_NO_GO)
    yield build_gopeer()


@pytest.mark.usefixtures("gopeer")
async def test_go_agent_behind_proxy_is_shown_live() -> None:
    proxy_cmd = [str(TRPC_BRIDGE), "proxy", "--host", "127.0.0.1", "--port", "0"]
    with (
        go_server("reasoning_tool") as upstream,
        running([*proxy_cmd, "--grpc-port", "-1", "--upstream", upstream.url]) as proxy,
    ):
        async with playground_browser() as playground:
            await playground.open(proxy.url)
            run = await playground.ask("What is the weather in Beijing?", user="bob")
            shown = await read_run(run)
            assert shown.status == "finished"
            assert shown.reasoning == ["The user asks about Beijing; I should call get_weather."]
            assert shown.tools == [
                ("get_weather", {"city": "Beijing"}, {"city": "Beijing", "temp": "20°C"})
            ]
            assert shown.answers == ["It is 20°C in Beijing."]
            assert shown.errors == []
            assert shown.trace == "no trace recorded (tracing is off on this server)"
            assert shown.trace_id is None

            await playground.ask("And in Shanghai?")
            await playground.screenshot("playground-go.png")
            thread = await playground.thread_id()
            assert playground.errors == []

        # Both turns reached trpc-agent-go in one session (the thread), as the user typed.
        starts = [line for line in upstream.logs if line.get("log") == "run_start"]
        assert [(s["user_id"], s["session_id"]) for s in starts] == [("bob", thread)] * 2
