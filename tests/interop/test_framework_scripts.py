"""The framework peers' scripts (interop/python/scripts.py, framework-free) say what the
bridge's scenario twins say: one expectation serves every cell of the matrix."""

from __future__ import annotations

import json

import pytest
from frameworks import SCENARIOS, peer_scripts
from views import View, bridge_view

from trpc_bridge.agents.scenarios import SCRIPTS
from trpc_bridge.events import AgentRequest

PEER = peer_scripts()


def _canon(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _peer_view(scenario: str) -> View:
    steps = PEER.SCRIPTS[scenario].steps
    calls = [call for step in steps for call in step.calls]
    return View(
        texts=tuple(step.text for step in steps if step.text),
        thoughts=tuple("".join(step.reasoning) for step in steps if step.reasoning),
        calls=tuple((c.name, _canon(c.args)) for c in calls),
        results=tuple((c.name, _canon(PEER.get_weather(**c.args))) for c in calls),
        error=any(step.error and step.error[1] == "boom" for step in steps),
    )


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_peer_script_matches_the_bridge_twin(scenario: str) -> None:
    assert _peer_view(scenario) == bridge_view(SCRIPTS[scenario](AgentRequest()))


def test_every_peer_scenario_is_in_the_matrix() -> None:
    assert set(PEER.SCRIPTS) == set(SCENARIOS)
