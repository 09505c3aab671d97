"""``trpc-bridge`` arguments that name nothing usable get a one-line error, not a traceback."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from trpc_bridge.agents.loader import AgentLoadError, load_agent
from trpc_bridge.cli import app


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nosuch_module_xyz:agent", "cannot import 'nosuch_module_xyz'"),
        ("trpc_bridge.agents.scenarios:nothing", "has no attribute 'nothing'"),
        ("trpc_bridge.agents.scenarios:SCRIPTS", "is not an Agent"),
        ("no-colon", "must be 'demo', 'tck', 'module:attr' or 'grpc://host:port'"),
    ],
)
def test_serve_rejects_unusable_agents(spec: str, message: str) -> None:
    result = CliRunner().invoke(app, ["serve", "--agent", spec])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("grpc://127.0.0.1:{port}?connect_timeout=0.3", "Describe at grpc://127.0.0.1:"),
        ("grpc://127.0.0.1:{port}?wait=1", "unknown option 'wait'"),
    ],
)
@pytest.mark.parametrize("command", ["serve --agent", "proxy --upstream"])
def test_unusable_grpc_agents_are_one_line(spec: str, message: str, command: str) -> None:
    """Nothing listens there (or the URL is wrong): exit 1 with the reason."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = spec.format(port=sock.getsockname()[1])
    result = CliRunner().invoke(app, [*command.split(), url, "--port", "0", "--grpc-port", "-1"])
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_serve_rejects_unknown_negotiation() -> None:
    result = CliRunner().invoke(app, ["serve", "--negotiation", "sometimes"])
    assert result.exit_code == 2
    assert "unknown negotiation" in result.output


def test_agents_are_found_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_weather_agent.py").write_text(
        "from trpc_bridge.agents.scenarios import text as agent\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(tmp_path)])
    assert load_agent("my_weather_agent:agent").name == "weather-agent"
    with pytest.raises(AgentLoadError):
        load_agent("my_weather_agent:missing")


def test_serve_encoding_flags_reach_the_wire() -> None:
    """`--generic-errors --no-adk-keys` serve trpc's default error text and single keys."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cli = Path(sys.executable).parent / "trpc-bridge"
    cmd = [str(cli), "serve", "--port", str(port), "--grpc-port", "-1"]
    server = subprocess.Popen(
        [*cmd, "--generic-errors", "--no-adk-keys"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(300):
            try:
                httpx.get(f"{url}.well-known/agent.json", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                time.sleep(0.05)

        def stream(text: str) -> list[dict[str, object]]:
            message = {
                "kind": "message",
                "messageId": "m",
                "role": "user",
                "parts": [{"kind": "text", "text": text}],
                "metadata": {"interaction_spec_version": "0.1"},
            }
            body = {"jsonrpc": "2.0", "id": "1", "method": "message/stream"}
            body["params"] = {"message": message}  # type: ignore[assignment]
            with httpx.stream("POST", url, json=body, timeout=30) as response:
                lines = [line for line in response.iter_lines() if line.startswith("data:")]
            return [json.loads(line[5:])["result"] for line in lines]

        failed = stream("please fail")
        assert failed[-1]["kind"] == "message"
        assert failed[-1]["parts"] == [
            {"kind": "text", "text": "An error occurred while processing your request."}
        ]
        weather = json.dumps(stream("weather in Oslo"))
        assert '"thought": true' in weather and "adk_thought" not in weather
        assert '"type": "function_call"' in weather and "adk_type" not in weather
    finally:
        server.terminate()
        server.wait(timeout=10)
