"""One trace across languages: trpc-agent-go ⇄ the bridge, W3C ``traceparent`` on the wire.

- go→py: trpc-agent-go's ``A2AAgent`` (``gopeer call``, which starts a root span and logs
  its trace id) calls ``trpc-bridge serve``; the bridge's SERVER span must be in that trace.
- py→go: ``trpc-bridge call`` calls trpc-agent-go's server (``gopeer serve``, which logs the
  ``traceparent`` header it received); the header must name the bridge's CLIENT span.

The bridge processes export spans with ``OTEL_TRACES_EXPORTER=console``: one JSON line
per span on stderr, which the harness collects like any other JSON log line.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from peers import TRPC_BRIDGE, bridge_proxy, bridge_server, go_call, go_server

_CONSOLE_TRACING = {"OTEL_TRACES_EXPORTER": "console"}


def _spans(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        line
        for line in lines
        if line.get("kind") == f"SpanKind.{kind}"
        and str(line.get("name", "")).startswith("invoke_agent")
    ]


@pytest.mark.cell("trace", "go→py")
def test_go_client_trace_continues_in_the_bridge_server(
    gopeer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in _CONSOLE_TRACING.items():
        monkeypatch.setenv(name, value)
    with bridge_server("trpc_bridge.agents.scenarios:tool") as bridge:
        result = go_call(bridge.url, "weather?", stream=True)
        assert result.returncode == 0, result.logs
        [go_trace] = [log for log in result.logs if log.get("log") == "trace"]
        server_span = bridge.wait_for_log(lambda line: bool(_spans([line], "SERVER")))
    assert server_span["context"]["trace_id"] == "0x" + go_trace["trace_id"]
    # A remote parent, not a fresh root. (With trpc-agent-go v1.11.2 it is gopeer's own
    # span: the header carries the caller's span, not an invoke_agent span of the client.)
    assert server_span["parent_id"] is not None
    assert server_span["attributes"]["a2a.transport"] == "JSONRPC"
    assert server_span["attributes"]["a2a.protocol.version"] == "0.3"


@pytest.mark.cell("trace", "py→go")
def test_bridge_client_trace_reaches_trpc_agent_go(gopeer: Path) -> None:
    with go_server("text") as go:
        result = subprocess.run(
            [str(TRPC_BRIDGE), "call", go.url, "hello", "--json"],
            env={**os.environ, **_CONSOLE_TRACING},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        request = go.wait_for_log(
            lambda line: line.get("log") == "request" and line.get("http_method") == "POST"
        )
    spans = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    [client_span] = _spans(spans, "CLIENT")
    version, trace_id, parent_id, _flags = request["traceparent"].split("-")
    assert version == "00"
    assert "0x" + trace_id == client_span["context"]["trace_id"]
    assert "0x" + parent_id == client_span["context"]["span_id"]
    # stdout stayed clean: only the events, one JSON object per line.
    assert all(json.loads(line) for line in result.stdout.splitlines())


@pytest.mark.cell("trace", "go→proxy→go")
def test_go_to_go_through_the_proxy_is_one_trace(
    gopeer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in _CONSOLE_TRACING.items():
        monkeypatch.setenv(name, value)
    with go_server("text") as upstream, bridge_proxy(upstream.url) as proxy:
        result = go_call(proxy.url, "hello", stream=True)
        assert result.returncode == 0, result.logs
        [go_trace] = [log for log in result.logs if log.get("log") == "trace"]
        proxy_client = proxy.wait_for_log(lambda line: bool(_spans([line], "CLIENT")))
        received = upstream.wait_for_log(
            lambda line: line.get("log") == "request" and line.get("http_method") == "POST"
        )
    [proxy_server] = _spans(proxy.logs, "SERVER")
    trace_id = "0x" + go_trace["trace_id"]
    assert proxy_server["context"]["trace_id"] == trace_id
    assert proxy_client["context"]["trace_id"] == trace_id
    assert proxy_client["parent_id"] == proxy_server["context"]["span_id"]
    _version, upstream_trace, upstream_parent, _flags = received["traceparent"].split("-")
    assert "0x" + upstream_trace == trace_id
    assert "0x" + upstream_parent == proxy_client["context"]["span_id"]


@pytest.mark.parametrize("transport", ["jsonrpc", "rest", "grpc"])
def test_bridge_call_proxy_serve_is_one_trace(
    transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """call → proxy → serve, all bridge processes; the first hop over each transport."""
    for name, value in _CONSOLE_TRACING.items():
        monkeypatch.setenv(name, value)
    with (
        bridge_server("trpc_bridge.agents.scenarios:tool") as agent,
        bridge_proxy(agent.url) as proxy,
    ):
        result = subprocess.run(
            [str(TRPC_BRIDGE), "call", proxy.url, "weather?", "--json", "--transport", transport],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        agent.wait_for_log(lambda line: bool(_spans([line], "SERVER")))
        proxy.wait_for_log(lambda line: bool(_spans([line], "SERVER")))
    caller_spans = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    [caller] = _spans(caller_spans, "CLIENT")
    [proxy_server] = _spans(proxy.logs, "SERVER")
    [proxy_client] = _spans(proxy.logs, "CLIENT")
    [agent_server] = _spans(agent.logs, "SERVER")
    chain = [caller, proxy_server, proxy_client, agent_server]
    assert {span["context"]["trace_id"] for span in chain} == {caller["context"]["trace_id"]}
    for parent, child in itertools.pairwise(chain):
        assert child["parent_id"] == parent["context"]["span_id"]
    assert (
        proxy_server["attributes"]["a2a.transport"]
        == {
            "jsonrpc": "JSONRPC",
            "rest": "HTTP+JSON",
            "grpc": "GRPC",
        }[transport]
    )
    # The agent's tool call is an execute_tool span under the agent's server span.
    tools = [line for line in agent.logs if str(line.get("name", "")).startswith("execute_tool")]
    assert tools
    assert all(tool["parent_id"] == agent_server["context"]["span_id"] for tool in tools)
