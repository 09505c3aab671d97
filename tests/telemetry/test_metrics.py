"""The bridge's metrics as their readers see them: ``/metrics`` scraped and parsed with
``prometheus_client``'s own text parser, and the OTLP export of ``trpc-bridge serve``
received by a loopback collector. Names, units and attributes are checked against the
GenAI, HTTP and RPC conventions; the time to first token of a streamed run with a delay
is below the run's duration; no attribute holds an id."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
from a2a.types import a2a_pb2_grpc
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.sdk.metrics import MeterProvider
from otlp_collector import loopback_collector
from peers import TRPC_BRIDGE, bridge_server, running
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families
from task_calls import TaskCalls, final_state

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import AgentEvent, AgentRequest, Usage
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.options import OpsOptions

#: The first delta comes this late; the deltas after it, this far apart.
FIRST_DELAY = 0.3
GAP = 0.02
DELTAS = 5
#: Label values that would be ids: a task, context or message id, a trace id, a UUID.
_ID = re.compile(r"^(task|ctx|msg|run|thread)-|[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-")


def _slow_agent() -> FunctionAgent:
    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        await asyncio.sleep(FIRST_DELAY)
        for index in range(DELTAS):
            if index:
                await asyncio.sleep(GAP)
            yield AgentEvent.text_delta(f"d{index} ", "chatcmpl-slow")
        final = AgentEvent.final_text("".join(f"d{i} " for i in range(DELTAS)), "chatcmpl-slow")
        final.usage = Usage(prompt_tokens=12, completion_tokens=DELTAS, total_tokens=12 + DELTAS)
        yield final

    return FunctionAgent("slow-agent", "streams slowly", run)


def _message(message_id: str) -> dict[str, Any]:
    return {
        "kind": "message",
        "role": "user",
        "messageId": message_id,
        "parts": [{"kind": "text", "text": "hi"}],
    }


def _samples(text: str) -> dict[str, Any]:
    """Prometheus family name → the parsed family."""
    return {family.name: family for family in text_string_to_metric_families(text)}


def _labels(family: Any, suffix: str = "") -> list[dict[str, str]]:
    return [s.labels for s in family.samples if s.name == family.name + suffix]


def _value(family: Any, suffix: str, **labels: str) -> float:
    return sum(
        float(s.value)
        for s in family.samples
        if s.name == family.name + suffix and all(s.labels.get(k) == v for k, v in labels.items())
    )


async def _grpc_stream(address: str) -> None:
    """One 1.0 gRPC streamed call (for ``rpc.server.duration`` and the stream count)."""
    from a2a.types import Message, Part, Role, SendMessageRequest

    message = Message(
        message_id=f"m-{uuid.uuid4().hex}", role=Role.ROLE_USER, parts=[Part(text="hi")]
    )
    async with grpc.aio.insecure_channel(address) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
        call = stub.SendStreamingMessage(SendMessageRequest(message=message), timeout=30)
        async for _ in call:
            pass


async def test_prometheus_text_has_the_conventions_names_units_and_attributes() -> None:
    registry = CollectorRegistry(auto_describe=True)
    provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=registry)])
    ops = OpsOptions(meter_provider=provider, prometheus=registry, metrics_path=True)
    async with BridgeServer(_slow_agent(), ServerOptions(ops=ops)) as server:
        calls = TaskCalls(server.jsonrpc_url)
        async with calls.stream("hello") as frames:
            assert final_state([frame async for frame in frames]) == "completed"
        await calls.call("message/send", {"message": _message("m-unary")})
        await _grpc_stream(server.grpc_address)
        await calls.close()
        async with httpx.AsyncClient(timeout=30) as http:
            scraped = await http.get(f"http://127.0.0.1:{server.http_port}/metrics")
    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain")
    families = _samples(scraped.text)

    run = families["gen_ai_server_request_duration_seconds"]
    # The text format carries a unit as the name's suffix (``_seconds``: unit ``s``).
    assert run.type == "histogram"
    run_labels = _labels(run, "_count")
    assert set(run_labels[0]) >= {
        "gen_ai_operation_name",
        "gen_ai_agent_name",
        "a2a_transport",
        "trpc_bridge_outcome",
    }
    assert {(r["a2a_transport"], r.get("a2a_protocol_version")) for r in run_labels} == {
        ("JSONRPC", "0.3"),
        ("GRPC", "1.0"),
    }
    assert {r["gen_ai_agent_name"] for r in run_labels} == {"slow-agent"}
    assert {r["trpc_bridge_outcome"] for r in run_labels} == {"ok"}
    assert _value(run, "_count") == 3

    ttft = families["gen_ai_server_time_to_first_token_seconds"]
    # Streamed runs only (the JSON-RPC stream and the gRPC one): a unary call's caller
    # sees nothing before the end.
    streamed = {"a2a_transport": "JSONRPC"}
    assert _value(ttft, "_count") == 2
    assert _value(ttft, "_count", **streamed) == 1
    assert _value(ttft, "_sum", **streamed) >= FIRST_DELAY
    # The time to the first token is below the whole run's duration.
    assert _value(ttft, "_sum", **streamed) < _value(run, "_sum", **streamed)
    per_token = families["gen_ai_server_time_per_output_token_seconds"]
    assert GAP <= _value(per_token, "_sum", **streamed) < FIRST_DELAY

    tokens = families["gen_ai_client_token_usage"]
    assert tokens.type == "histogram"
    assert _value(tokens, "_sum", gen_ai_token_type="input", a2a_transport="JSONRPC") == 24
    assert _value(tokens, "_sum", gen_ai_token_type="output", a2a_transport="JSONRPC") == 10

    events = families["trpc_bridge_server_events"]
    assert events.type == "counter"
    # The encodings the negotiation chose for the calls (a caller without a trpc spec
    # version: plain A2A on gRPC; JSON-RPC 0.3 calls by the auto policy).
    assert {r["trpc_bridge_encoding"] for r in _labels(events, "_total")} == {"plain", "trpc"}
    assert _value(events, "_total") == 3 * (DELTAS + 1)

    http_family = families["http_server_request_duration_seconds"]
    posts = [r for r in _labels(http_family, "_count") if r["http_request_method"] == "POST"]
    assert {r["http_response_status_code"] for r in posts} == {"200"}
    assert {r["url_scheme"] for r in posts} == {"http"}

    rpc = families["rpc_server_duration_milliseconds"]
    [rpc_labels] = _labels(rpc, "_count")
    assert rpc_labels["rpc_system"] == "grpc"
    assert rpc_labels["rpc_service"] == "lf.a2a.v1.A2AService"
    assert rpc_labels["rpc_method"] == "SendStreamingMessage"
    assert rpc_labels["rpc_grpc_status_code"] == "0"

    streams = families["trpc_bridge_server_active_streams"]
    assert streams.type == "gauge"  # an up-down counter: open streams now
    assert {r["a2a_transport"] for r in _labels(streams)} == {"JSONRPC", "GRPC"}
    assert _value(streams, "") == 0  # every stream has ended
    assert _value(families["trpc_bridge_tasks_running"], "") == 0

    # Low cardinality: no label anywhere carries an id.
    for family in families.values():
        for sample in family.samples:
            for name, value in sample.labels.items():
                if name not in ("service_instance_id",):
                    assert not _ID.search(value), (family.name, name, value)
    provider.shutdown()


async def test_a_failed_and_a_cancelled_run_say_so() -> None:
    registry = CollectorRegistry(auto_describe=True)
    provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=registry)])
    ops = OpsOptions(meter_provider=provider, prometheus=registry, metrics_path=True)

    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        if request.text == "fail":
            raise RuntimeError("boom")
        yield AgentEvent.text_delta("waiting ", "r1")
        await asyncio.sleep(60)
        yield AgentEvent.final_text("never", "r1")

    agent = FunctionAgent("flaky-agent", "fails or hangs", run)
    async with BridgeServer(agent, ServerOptions(ops=ops, grpc_port=None)) as server:
        calls = TaskCalls(server.jsonrpc_url)
        async with calls.stream("fail") as frames:
            assert final_state([frame async for frame in frames]) == "failed"
        async with calls.stream("hang") as frames:
            await anext(frames)  # the first delta: then the caller goes away
        await calls.close()
        async with httpx.AsyncClient(timeout=30) as http:
            for _ in range(100):  # the cancelled run ends after the disconnect is noticed
                text = (await http.get(f"http://127.0.0.1:{server.http_port}/metrics")).text
                run_family = _samples(text)["gen_ai_server_request_duration_seconds"]
                if _value(run_family, "_count") == 2:
                    break
                await asyncio.sleep(0.05)
    outcomes = {
        (r["trpc_bridge_outcome"], r.get("error_type", "")) for r in _labels(run_family, "_count")
    }
    assert outcomes == {("error", "run_error"), ("cancelled", "")}
    # A failed run has no time to first token (the conventions count successful ones).
    assert (
        "gen_ai_server_time_to_first_token_seconds" not in _samples(text)
        or _value(_samples(text)["gen_ai_server_time_to_first_token_seconds"], "_count") == 0
    )
    provider.shutdown()


def test_trpc_bridge_serve_exports_metrics_over_otlp() -> None:
    """As users run it: the standard variables point the OTLP exporter at a collector,
    which receives the conventions' metrics with their units."""
    with loopback_collector() as collector:
        env = {
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": f"{collector.url}/v1/metrics",
            "OTEL_METRIC_EXPORT_INTERVAL": "200",
            "OTEL_SERVICE_NAME": "metrics-test",
        }
        extra = ["--grpc-port", "-1", "--no-trace-view"]
        with bridge_server("trpc_bridge.agents.scenarios:text", extra=extra, env=env) as server:
            params = {"message": _message("m-otlp")}
            body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": params}
            assert "result" in httpx.post(server.url, json=body, timeout=30).json()
            metrics: dict[str, Any] = {}
            for _ in range(100):
                for raw in collector.received("/v1/metrics"):
                    request = ExportMetricsServiceRequest.FromString(raw)
                    for resource in request.resource_metrics:
                        for scope in resource.scope_metrics:
                            for metric in scope.metrics:
                                metrics[metric.name] = metric
                if "gen_ai.server.request.duration" in metrics:
                    break
                time.sleep(0.1)
    run = metrics["gen_ai.server.request.duration"]
    assert run.unit == "s"
    [point] = run.histogram.data_points
    attributes = {kv.key: kv.value.string_value for kv in point.attributes}
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.agent.name"] == "weather-agent"
    assert attributes["a2a.transport"] == "JSONRPC"
    assert attributes["trpc_bridge.outcome"] == "ok"
    assert metrics["http.server.request.duration"].unit == "s"
    assert metrics["trpc_bridge.server.events"].unit == "{event}"


def test_a_proxy_times_its_calls_to_the_upstream_agent() -> None:
    """``gen_ai.client.operation.duration`` of ``trpc-bridge proxy``'s RemoteAgent, read
    from the proxy's metrics port."""
    with bridge_server("trpc_bridge.agents.scenarios:text", extra=["--grpc-port", "-1"]) as agent:
        cmd = [str(TRPC_BRIDGE), "proxy", "--upstream", agent.url, "--port", "0"]
        cmd += ["--grpc-port", "-1", "--metrics-port", "0", "--no-trace-view"]
        with running(cmd) as proxy:
            params = {"message": _message("m-proxy")}
            body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": params}
            assert "result" in httpx.post(proxy.url, json=body, timeout=30).json()
            families = _samples(httpx.get(proxy.endpoint("metrics"), timeout=30).text)
    client = families["gen_ai_client_operation_duration_seconds"]
    [labels] = _labels(client, "_count")
    assert labels["gen_ai_operation_name"] == "invoke_agent"
    assert labels["gen_ai_agent_name"] == "weather-agent"
    assert labels["a2a_transport"] == "JSONRPC"
    assert "error_type" not in labels
    # The proxy's own run of the same call is timed on the server side.
    assert _value(families["gen_ai_server_request_duration_seconds"], "_count") == 1


async def test_a_proxy_counts_the_upstream_agents_tokens_once() -> None:
    """The upstream bridge writes its agent's usage on the trpc wire; ``trpc-bridge
    proxy``'s RemoteAgent reads it, and the proxy's metrics count it once (by the call
    to the upstream), however the proxy's own caller called."""
    async with BridgeServer(_slow_agent(), ServerOptions(grpc_port=None)) as upstream:
        cmd = [str(TRPC_BRIDGE), "proxy", "--upstream", upstream.jsonrpc_url, "--port", "0"]
        cmd += ["--grpc-port", "-1", "--metrics-port", "0", "--no-trace-view"]
        with contextlib.ExitStack() as stack:
            # Started from a thread: the proxy reads the upstream's card, served by this loop.
            proxy = await asyncio.to_thread(stack.enter_context, running(cmd))
            calls = TaskCalls(proxy.url)
            async with calls.stream("hello") as frames:
                assert final_state([frame async for frame in frames]) == "completed"
            assert "result" in await calls.call("message/send", {"message": _message("m-u")})
            await calls.close()
            async with httpx.AsyncClient(timeout=30) as http:
                families = _samples((await http.get(proxy.endpoint("metrics"))).text)
    tokens = families["gen_ai_client_token_usage"]
    sums = [s for s in tokens.samples if s.name.endswith("_sum")]
    assert len(sums) == 2  # input and output, one series each: nothing counted twice
    assert _value(tokens, "_sum", gen_ai_token_type="input") == 2 * 12
    assert _value(tokens, "_sum", gen_ai_token_type="output") == 2 * DELTAS
    assert _value(tokens, "_count", gen_ai_token_type="output") == 2  # one value per call
    [labels] = [s.labels for s in sums if s.labels["gen_ai_token_type"] == "input"]
    assert labels["gen_ai_agent_name"] == "slow-agent"
    assert labels["a2a_transport"] == "JSONRPC"
