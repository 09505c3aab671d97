"""``trpc-bridge`` arguments that name nothing usable get a one-line error, not a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trpc_bridge.cli import app
from trpc_bridge.server.loader import AgentLoadError, load_agent


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nosuch_module_xyz:agent", "cannot import 'nosuch_module_xyz'"),
        ("trpc_bridge.scenarios:nothing", "has no attribute 'nothing'"),
        ("trpc_bridge.scenarios:SCRIPTS", "is not an Agent"),
        ("no-colon", "must be 'demo' or 'module:attr'"),
    ],
)
def test_serve_rejects_unusable_agents(spec: str, message: str) -> None:
    result = CliRunner().invoke(app, ["serve", "--agent", spec])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_serve_rejects_unknown_negotiation() -> None:
    result = CliRunner().invoke(app, ["serve", "--negotiation", "sometimes"])
    assert result.exit_code == 2
    assert "must be auto, always or never" in result.output


def test_agents_are_found_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_weather_agent.py").write_text(
        "from trpc_bridge.scenarios import text as agent\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(tmp_path)])
    assert load_agent("my_weather_agent:agent").name == "weather-agent"
    with pytest.raises(AgentLoadError):
        load_agent("my_weather_agent:missing")
