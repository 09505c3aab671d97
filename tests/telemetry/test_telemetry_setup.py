"""``setup_tracing`` and ``configure_sdk_spans`` change process-wide state (the global
tracer provider, an env var read at a2a import time), so each case runs in a fresh
interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from trpc_bridge.telemetry.setup import exporter_names

_OTEL_VARS = (
    "OTEL_TRACES_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_SDK_DISABLED",
    "OTEL_SERVICE_NAME",
    "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED",
)


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in _OTEL_VARS}
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )


def _run(code: str, **env: str) -> str:
    """stdout then stderr (where the console exporter writes)."""
    result = _python(code, **env)
    return result.stdout + result.stderr


_EMIT_ONE_SPAN = """
from opentelemetry import trace
from trpc_bridge.telemetry.setup import setup_tracing
provider = setup_tracing({name})
print("PROVIDER", provider is not None)
with trace.get_tracer("t").start_as_current_span("hello"):
    pass
"""


def test_console_exporter_prints_spans_with_the_service_name() -> None:
    out = _run(_EMIT_ONE_SPAN.format(name="None"), OTEL_TRACES_EXPORTER="console")
    assert "PROVIDER True" in out
    [line] = [line for line in out.splitlines() if line.startswith("{")]  # one line per span
    span = json.loads(line)
    assert span["name"] == "hello"
    assert span["resource"]["attributes"]["service.name"] == "trpc-bridge"


def test_service_name_argument_beats_env() -> None:
    code = _EMIT_ONE_SPAN.format(name="'proxy-a'")
    out = _run(code, OTEL_TRACES_EXPORTER="console", OTEL_SERVICE_NAME="from-env")
    assert '"service.name": "proxy-a"' in out
    out = _run(
        _EMIT_ONE_SPAN.format(name="None"),
        OTEL_TRACES_EXPORTER="console",
        OTEL_SERVICE_NAME="from-env",
    )
    assert '"service.name": "from-env"' in out


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"OTEL_TRACES_EXPORTER": "none"},
        {"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"},
        {"OTEL_TRACES_EXPORTER": "zipkin-not-installed"},
    ],
    ids=["unset", "none", "sdk-disabled", "unsupported"],
)
def test_off_installs_nothing(env: dict[str, str]) -> None:
    result = _python(_EMIT_ONE_SPAN.format(name="None"), **env)
    assert result.stdout.strip() == "PROVIDER False"
    assert '"name": "hello"' not in result.stderr


def test_exporter_defaults_to_otlp_when_an_endpoint_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _OTEL_VARS:
        monkeypatch.delenv(name, raising=False)
    assert exporter_names() == []
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:4318/v1/traces")
    assert exporter_names() == ["otlp"]
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console, otlp")
    assert exporter_names() == ["console", "otlp"]


_SDK_SPANS = """
from trpc_bridge.telemetry.sdk_spans import configure_sdk_spans
configure_sdk_spans({arg})
import a2a.utils.telemetry as sdk
print(sdk.otel_enabled)
"""


@pytest.mark.parametrize(
    ("arg", "env", "expected"),
    [
        ("None", {}, "False"),  # the bridge's default: off
        ("None", {"OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "true"}, "True"),  # env wins
        ("True", {}, "True"),  # --sdk-spans
        ("False", {"OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "true"}, "False"),
    ],
)
def test_sdk_spans_switch(arg: str, env: dict[str, str], expected: str) -> None:
    assert _run(_SDK_SPANS.format(arg=arg), **env).strip() == expected


def test_sdk_spans_switch_after_a2a_import_warns() -> None:
    code = "import a2a.utils.telemetry\n" + _SDK_SPANS.format(arg="False")
    result = _python(code)
    assert result.stdout.strip() == "True"
    assert "stay on" in result.stderr
