"""An agent written in Go behind ``AgentHost`` (``interop/agenthost``), served by
``trpc-bridge serve --agent grpc://…``: trpc-agent-go's ``A2AAgent`` (``gopeer call``) and
``@ag-ui/client`` see what they see from the bridge's Python demo agent, whose Go twin the
sidecar is; identity, trace context and cancellation cross into the sidecar; a sidecar
that crashes, stalls, breaks the model or is gone is a failed run for the caller; the
tokens the Go agent reports are counted in the bridge's metrics."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from parallel import refused_port
from peers import (
    AGENTHOST,
    AGENTHOST_DIR,
    Process,
    agenthost_server,
    bridge_server,
    go,
    go_call,
    normalise,
    stop,
)
from prometheus_client.parser import text_string_to_metric_families

PROMPTS = ("weather in Paris", "run some code", "please fail")
NODE_HARNESS = Path(__file__).parents[1] / "agui_node"
_RESPONSE_ID = re.compile(r"chatcmpl-[0-9a-f]{24}")
_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"


def _comparable(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Generated ids (response ids too) numbered by first appearance."""
    seen: dict[str, str] = {}
    text = _RESPONSE_ID.sub(
        lambda m: seen.setdefault(m.group(0), f"<r{len(seen)}>"), json.dumps(events)
    )
    return normalise(json.loads(text))


#: One set of module servers, in one pytest-xdist worker.
pytestmark = pytest.mark.xdist_group("agenthost")


@pytest.fixture(scope="module")
def bridges(gopeer: Path, agenthost: Path) -> Iterator[dict[str, Process]]:
    """The bridge over the Go sidecar, the sidecar, and the bridge over the demo agent."""
    with (
        agenthost_server() as sidecar,
        bridge_server(sidecar.url) as over_go,
        bridge_server("demo") as demo,
    ):
        yield {"sidecar": sidecar, "over_go": over_go, "demo": demo}


@pytest.mark.parametrize("command", [["vet", "./..."], ["test", "./..."]])
def test_go_side_of_the_contract(agenthost: Path, command: list[str]) -> None:
    """``go test``: the golden vector P01 parses and re-serialises byte for byte in Go;
    ``go vet`` also compiles docs/agenthost.md's example (``example/``)."""
    result = go(AGENTHOST_DIR, *command)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "unary"])
@pytest.mark.parametrize("prompt", PROMPTS)
def test_go_client_sees_the_demo_agents_events(
    bridges: dict[str, Process], prompt: str, stream: bool
) -> None:
    reference = go_call(bridges["demo"].url, prompt, stream=stream, user="gopher")
    bridged = go_call(bridges["over_go"].url, prompt, stream=stream, user="gopher")
    assert reference.returncode == 0 and bridged.returncode == 0, bridged.logs
    assert _comparable(bridged.events) == _comparable(reference.events)
    run = bridges["sidecar"].wait_for_log(
        lambda line: line.get("log") == "run" and line.get("text") == prompt
    )
    assert run["x-user-id"] == "gopher" and run["user_id"] == "gopher"


def test_trace_context_reaches_the_sidecar(bridges: dict[str, Process]) -> None:
    """A caller's traceparent crosses the bridge (tracing off: forwarded as is) into the
    sidecar's gRPC metadata."""
    message = {
        "kind": "message",
        "messageId": "m-trace",
        "role": "user",
        "parts": [{"kind": "text", "text": "weather in London, traced"}],
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    headers = {"traceparent": f"00-{_TRACE_ID}-00f067aa0ba902b7-01"}
    response = httpx.post(bridges["over_go"].url, json=body, headers=headers, timeout=30)
    assert response.status_code == 200 and "result" in response.json()
    run = bridges["sidecar"].wait_for_log(
        lambda line: line.get("text") == "weather in London, traced"
    )
    assert run["traceparent"].split("-")[1] == _TRACE_ID


NEEDS_NODE = pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")


def _agui_summary(url: str, prompt: str) -> dict[str, Any]:
    assert (NODE_HARNESS / "node_modules" / "@ag-ui" / "client").is_dir(), (
        "run `make tests/agui_node/node_modules` (npm ci) first"
    )
    result = subprocess.run(
        ["node", str(NODE_HARNESS / "run.mjs"), f"{url}agui", prompt],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    summary: dict[str, Any] = json.loads(result.stdout)
    assert summary["ok"], (summary["error"], result.stderr)
    assert summary["warnings"] == []
    return summary


@NEEDS_NODE
@pytest.mark.parametrize("prompt", PROMPTS)
def test_agui_client_accepts_the_go_agents_stream(bridges: dict[str, Process], prompt: str) -> None:
    """``@ag-ui/client`` (verification on) accepts ``/agui`` over the Go agent, and ends
    with the same messages and event types as over the Python demo agent."""
    bridged = _agui_summary(bridges["over_go"].url, prompt)
    reference = _agui_summary(bridges["demo"].url, prompt)
    assert _comparable([bridged]) == _comparable([reference])
    assert bridged["types"][-1] == ("RUN_ERROR" if "fail" in prompt else "RUN_FINISHED")


def test_a_go_caller_that_cancels_cancels_the_sidecars_run(agenthost: Path, gopeer: Path) -> None:
    with agenthost_server("--delay", "200ms") as sidecar, bridge_server(sidecar.url) as bridge:
        result = go_call(bridge.url, "weather?", stream=True, cancel_after=2)
        assert result.returncode == 0
        sidecar.wait_for_log(lambda line: line.get("log") == "canceled", timeout=30)


def _failure(result_events: list[dict[str, Any]]) -> dict[str, Any]:
    errors = [e["error"] for e in result_events if e.get("error")]
    assert errors, result_events
    return dict(errors[-1])


@pytest.mark.parametrize(
    ("flags", "query", "expected"),
    [
        # Paced, so that the first events reach the bridge before the crash.
        (["--delay", "100ms", "--die-after", "3"], "", "failed: UNAVAILABLE"),
        (["--invalid-after", "2"], "", "sent an event that violates the model"),
        (["--first-delay", "60s"], "?idle_timeout=1", "sent no event for 1s"),
        (["--delay", "500ms"], "?timeout=1", "did not finish within 1s"),
    ],
    ids=["crash-mid-stream", "invalid-event", "stalled", "too-slow"],
)
def test_a_misbehaving_sidecar_is_a_failed_run_for_the_go_caller(
    agenthost: Path, gopeer: Path, flags: list[str], query: str, expected: str
) -> None:
    with (
        agenthost_server(*flags) as sidecar,
        bridge_server(sidecar.url + query) as bridge,
    ):
        result = go_call(bridge.url, "weather?", stream=True, timeout=60)
        assert result.returncode == 0, result.logs
        error = _failure(result.events)
        assert error["type"] == "run_error" and expected in error["message"], error
        # The bridge keeps serving; the agent card still answers.
        assert httpx.get(f"{bridge.url}.well-known/agent-card.json", timeout=10).is_success


def test_a_sidecar_that_is_gone_is_a_failed_run(agenthost: Path, gopeer: Path) -> None:
    with contextlib.ExitStack() as stack:
        sidecar = stack.enter_context(agenthost_server())
        bridge = stack.enter_context(bridge_server(sidecar.url + "?connect_timeout=1"))
        stop(sidecar.proc)
        # Its port held at once: a parallel test's server given it again would answer.
        stack.enter_context(refused_port(urlsplit(sidecar.url).port or 0))
        result = go_call(bridge.url, "weather?", stream=False, timeout=60)
        assert result.returncode == 0, result.logs
        assert "is unreachable (no connection within 1s)" in _failure(result.events)["message"]


def _agenthost_call(address: str, message: str, *flags: str) -> list[dict[str, Any]]:
    """``agenthost call``: the Go AgentHost client; its events, ids and times normalised."""
    result = subprocess.run(
        [str(AGENTHOST), "call", "--target", address, "--message", message, *flags],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    for event in events:
        event.pop("event_id", None)
        event.pop("timestamp", None)
    return _comparable(events)


@pytest.mark.parametrize("prompt", PROMPTS)
def test_go_agenthost_client_gets_the_models_events_from_the_bridge(
    bridges: dict[str, Process], prompt: str
) -> None:
    """A Go program runs the bridge's agents over AgentHost, without A2A: the Python demo
    agent, and the Go sidecar through the bridge, give what the Go sidecar gives."""
    sidecar = bridges["sidecar"].url.removeprefix("grpc://").rstrip("/")
    direct = _agenthost_call(sidecar, prompt)
    assert direct == _agenthost_call(bridges["demo"].grpc_address(), prompt)
    assert direct == _agenthost_call(bridges["over_go"].grpc_address(), prompt, "--user", "ann")
    run = bridges["sidecar"].wait_for_log(
        lambda line: line.get("text") == prompt and line.get("x-user-id") == "ann"
    )
    assert run["user_id"] == "ann"


def test_a_go_agenthost_client_that_cancels_cancels_through_the_bridge(
    agenthost: Path,
) -> None:
    with agenthost_server("--delay", "200ms") as sidecar, bridge_server(sidecar.url) as bridge:
        _agenthost_call(bridge.grpc_address(), "weather?", "--cancel-after", "2")
        sidecar.wait_for_log(lambda line: line.get("log") == "canceled", timeout=30)


@pytest.mark.parametrize("stream", [False, True])
def test_the_go_agents_token_usage_is_counted_once(agenthost: Path, stream: bool) -> None:
    """The sidecar (``--usage``: words counted as tokens) reports usage on its complete
    responses; ``gen_ai.client.token.usage`` on the bridge's metrics port has it once, by
    the bridge's call to the agent (not again by the run it served)."""
    prompt = "weather in Paris"  # 3 words, sent with the tool call and with the answer
    reasoning = "The user asks about the weather in Paris; I should call get_weather."
    answer = "It is 14°C in Paris."
    method = "message/stream" if stream else "message/send"
    message = {"kind": "message", "role": "user", "messageId": f"m-{method}",
               "parts": [{"kind": "text", "text": prompt}]}  # fmt: skip
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}
    with (
        agenthost_server("--usage") as sidecar,
        bridge_server(sidecar.url, extra=["--metrics-port", "0"]) as bridge,
    ):
        answered = httpx.post(bridge.url, json=body, timeout=30)
        assert answered.status_code == 200 and "error" not in answered.text
        scraped = httpx.get(bridge.endpoint("metrics"), timeout=30).text
    families = {family.name: family for family in text_string_to_metric_families(scraped)}
    tokens = families["gen_ai_client_token_usage"]
    sums = [s for s in tokens.samples if s.name.endswith("_sum")]
    by_type = {s.labels["gen_ai_token_type"]: float(s.value) for s in sums}
    assert len(sums) == 2  # one series per token type: counted once
    assert by_type == {"input": 2 * 3, "output": len(reasoning.split()) + len(answer.split())}
    assert {s.labels["gen_ai_agent_name"] for s in sums} == {"weather-agent"}
