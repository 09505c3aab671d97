"""``--log-format json`` as a log pipeline reads it: every stderr line of ``trpc-bridge
serve`` is one JSON object (``json.loads`` line by line), the access line of a message
call names the trace the server exported (received by a loopback OTLP collector), its
task and transport, and no line holds the request's body or credential. The text format
stays plain."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from subprocess import Popen
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from otlp_collector import loopback_collector

from trpc_bridge.telemetry.logs import (
    JsonFormatter,
    note_run,
    request_fields,
    reset_request_fields,
)

SECRET = "Bearer do-not-log-me"
BODY_TEXT = "a sentence that must not reach the log"


@contextlib.contextmanager
def _serve(*flags: str, env: dict[str, str] | None = None) -> Iterator[tuple[str, Popen[str]]]:
    """``trpc-bridge serve`` with its stderr kept whole for the test (read at the end)."""
    cli = Path(sys.executable).parent / "trpc-bridge"
    proc = subprocess.Popen(
        [str(cli), "serve", "--port", "0", "--grpc-port", "-1", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    url = ""
    deadline = time.monotonic() + 120
    try:
        while not url and time.monotonic() < deadline and proc.poll() is None:
            line = proc.stdout.readline()
            if line.startswith("JSON-RPC"):
                url = line.split()[1]
        assert url, "the server did not start"
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)


def _stop(proc: Popen[str]) -> str:
    proc.terminate()
    _, stderr = proc.communicate(timeout=30)
    return stderr


def _invoke_agent_spans(exports: list[bytes]) -> list[Any]:
    return [
        span
        for export in exports
        for resource in ExportTraceServiceRequest.FromString(export).resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
        if span.name.startswith("invoke_agent")
    ]


def test_json_lines_carry_the_exported_trace_task_and_transport() -> None:
    with loopback_collector() as collector:
        env = {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{collector.url}/v1/traces",
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }
        with _serve("--log-format", "json", env=env) as (url, proc):
            message = {
                "kind": "message",
                "messageId": "m-json-logs",
                "role": "user",
                "parts": [{"kind": "text", "text": BODY_TEXT}],
            }
            params = {"message": message}
            body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": params}
            headers = {"Authorization": SECRET, "X-User-ID": "alice"}
            answer = httpx.post(f"{url}?note=secret-query", json=body, headers=headers, timeout=30)
            assert "result" in answer.json()
            httpx.get(f"{url}.well-known/agent-card.json", timeout=30)
            # The run's span may leave in a later export than the first (the batch
            # processor sends what has ended by each tick): wait for it, bounded.
            deadline = time.monotonic() + 30
            while not (spans := _invoke_agent_spans(collector.received("/v1/traces"))):
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            stderr = _stop(proc)
    # Every line the process wrote on stderr is one JSON object.
    lines = [json.loads(line) for line in stderr.splitlines()]
    assert lines and all(isinstance(line, dict) for line in lines)
    [span] = spans
    [access] = [line for line in lines if line.get("url.path") == "/"]
    assert access["logger"] == "trpc_bridge.access"
    assert access["level"] == "INFO"
    assert access["trace_id"] == span.trace_id.hex()
    assert access["span_id"] == span.span_id.hex()
    assert access["transport"] == "JSONRPC"
    assert access["task_id"].startswith("task-")
    assert access["http.request.method"] == "POST"
    assert access["http.response.status_code"] == 200
    assert access["http.request.body.size"] == len(answer.request.content)
    assert access["http.response.body.size"] == len(answer.content)
    assert access["duration_ms"] > 0
    assert access["time"].endswith("Z")
    for leaked in (SECRET, BODY_TEXT, "secret-query", "alice"):
        assert leaked not in stderr
    # The card request has its own line, without a run's trace or task.
    [card] = [line for line in lines if line.get("url.path", "").endswith("card.json")]
    assert "task_id" not in card
    assert card["http.request.method"] == "GET"


def test_the_text_format_stays_plain() -> None:
    """The default: nothing but the plain lines Python writes (no JSON, no access line)."""
    with _serve("--no-trace-view") as (url, proc):
        assert httpx.get(f"{url}.well-known/agent-card.json", timeout=30).status_code == 200
        assert _stop(proc).strip() == ""


def test_a_line_names_the_run_of_its_request() -> None:
    """The formatter alone: fields noted by the runner reach a line written later in the
    same request; a record's own fields are keys of the line; an exception is text."""
    fields, token = request_fields("AG-UI")
    try:
        note_run(None, task_id="task-1")
        try:
            raise ValueError("bad")
        except ValueError:
            record = logging.getLogger("t").makeRecord(
                "t",
                logging.WARNING,
                __file__,
                1,
                "it %s",
                ("broke",),
                sys.exc_info(),
                extra={"fields": {"duration_ms": 1.5}},
            )
        line = json.loads(JsonFormatter().format(record))
    finally:
        reset_request_fields(token)
    assert line["message"] == "it broke"
    assert line["level"] == "WARNING"
    assert (line["task_id"], line["transport"]) == ("task-1", "AG-UI")
    assert "trace_id" not in line  # no span: none invented
    assert line["duration_ms"] == 1.5
    assert "ValueError: bad" in line["exception"]
    assert fields.task_id == "task-1"
