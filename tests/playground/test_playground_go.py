"""The playground in a real browser watching a Go agent: trpc-agent-go's A2A server (the
Go peer, scenario ``reasoning_tool``) behind ``trpc-bridge proxy``, both as processes the
way a person would run them. The Go server exports its spans over OTLP/HTTP to the proxy
(``OTEL_EXPORTER_OTLP_ENDPOINT`` = the proxy's URL), so the run's waterfall shows the
spans of both processes under one trace id.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from peers import SKIP_NO_GO, TRPC_BRIDGE, build_gopeer, go_available, go_server, running

from .browser import playground_browser, read_run

GO_SERVICE = "gopeer-upstream"

#: One headless Chromium at a time: the browser tests share a pytest-xdist worker.
pytestmark = pytest.mark.xdist_group("browser")


@pytest.fixture(scope="module")
def gopeer() -> Iterator[Path]:
    if not go_available():
        pytest.skip(SKIP_NO_GO)
    yield build_gopeer()


def _free_port() -> int:
    """A port for the proxy, known before the Go server starts (it exports there)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.mark.usefixtures("gopeer")
async def test_go_agent_behind_proxy_is_shown_live_with_both_processes_spans() -> None:
    port = _free_port()
    go_env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
        "OTEL_BSP_SCHEDULE_DELAY": "200",
        "OTEL_SERVICE_NAME": GO_SERVICE,
        "GOPEER_AGENT_SPANS": "1",  # trpc-agent-go's own spans (agent, model, tool)
    }
    proxy_cmd = [str(TRPC_BRIDGE), "proxy", "--host", "127.0.0.1", "--port", str(port)]
    with (
        go_server("reasoning_tool", env=go_env) as upstream,
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
            assert shown.trace_id is not None  # a loopback proxy keeps its spans

            # The waterfall: the proxy's SERVER and CLIENT spans, and the Go agent's own.
            go_rows = run.locator(f".span-row[data-service={GO_SERVICE}]")
            await go_rows.first.wait_for()
            await run.locator(".span-row[data-service=trpc-bridge][data-kind=CLIENT]").wait_for()
            names = await run.locator(".span-row .span-name").all_inner_texts()
            assert names[0] == "invoke_agent weather-agent"  # the proxy's SERVER span
            assert await go_rows.count() >= 1
            legend = await run.locator(".waterfall-legend").inner_text()
            assert "2 processes" in legend
            # Every span drawn is of the run's one trace; each parent is in it or the
            # caller's (the Go spans hang under the proxy's CLIENT span).
            async with httpx.AsyncClient(timeout=30) as http:
                url = f"{proxy.url}playground/traces/{shown.trace_id}"
                spans = (await http.get(url)).json()["spans"]
            assert {span["traceId"] for span in spans} == {shown.trace_id}
            assert {span["service"] for span in spans} == {"trpc-bridge", GO_SERVICE}
            by_id = {span["spanId"]: span for span in spans}
            [client] = [s for s in spans if s["kind"] == "CLIENT" and s["service"] == "trpc-bridge"]
            # The Go spans that start its side of the call hang under the CLIENT span.
            entries = [
                s
                for s in spans
                if s["service"] == GO_SERVICE
                and by_id.get(s["parentSpanId"], {}).get("service") != GO_SERVICE
            ]
            assert entries
            assert all(s["parentSpanId"] == client["spanId"] for s in entries)

            await playground.ask("And in Shanghai?")
            await playground.screenshot("playground-go.png")
            thread = await playground.thread_id()
            assert playground.errors == []

        # Both turns reached trpc-agent-go in one session (the thread), as the user typed.
        starts = [line for line in upstream.logs if line.get("log") == "run_start"]
        assert [(s["user_id"], s["session_id"]) for s in starts] == [("bob", thread)] * 2
