"""The bridge's OTLP span encoder against the SDK's: the same bytes for any batch of spans
(real ones from the serving path, and random ones from hypothesis), and the exporter that
uses it sends them to a real HTTP endpoint on loopback."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import (
    encode_spans as sdk_encode_spans,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, TraceFlags
from opentelemetry.trace.span import TraceState
from otlp_collector import LoopbackCollector, loopback_collector
from peers import bridge_server

from trpc_bridge.telemetry.otlp_encode import encode_spans
from trpc_bridge.telemetry.otlp_exporter import SDK_METRICS_ENV, OtlpHttpSpanExporter
from trpc_bridge.telemetry.server_span import ServerSpans
from trpc_bridge.telemetry.spans import AgentCall
from trpc_bridge.telemetry.tools import ToolSpans


def sdk_bytes(spans: Sequence[ReadableSpan]) -> bytes:
    data: bytes = sdk_encode_spans(spans).SerializePartialToString()
    return data


def provider(memory: InMemorySpanExporter, **resource: str) -> TracerProvider:
    made = TracerProvider(resource=Resource.create(dict(resource)))
    made.add_span_processor(SimpleSpanProcessor(memory))
    return made


def test_spans_of_a_served_call_encode_as_the_sdk_encodes_them() -> None:
    """The spans the bridge makes: a SERVER span under a remote caller (with tracestate and
    baggage), a tool span, a failed run with its exception event, and a span with a link."""
    memory = InMemorySpanExporter()
    tracer_provider = provider(memory, **{"service.name": "bridge"})
    spans = ServerSpans("weather", tracer_provider, record_content=True)
    carrier = {
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "tracestate": "vendor=abc,other=x-y",
        "baggage": "user=alice",
    }
    call = AgentCall("JSONRPC", "0.3", "ctx-1", "task-1", "alice", "Wie ist das Wetter? ☀")
    with spans.span(carrier, call):
        tools = ToolSpans(tracer_provider=tracer_provider, record_content=True)
        tools._start("call-1", "get_weather", '{"city": "北京"}')
        tools.close()
    with pytest.raises(RuntimeError), spans.span({}, AgentCall()):
        raise RuntimeError("model unavailable")
    tracer = tracer_provider.get_tracer("other", "1.2.3", schema_url="https://example.com/s")
    link = Link(SpanContext(7, 9, is_remote=True, trace_flags=TraceFlags(1)), {"n": 3})
    with tracer.start_as_current_span("linked", links=[link], kind=SpanKind.CONSUMER) as span:
        span.add_event("tick", {"values": (1, 2, 3), "ok": True, "ratio": 0.5})
    finished = memory.get_finished_spans()
    assert len(finished) == 4
    assert encode_spans(finished) == sdk_bytes(finished)
    request = ExportTraceServiceRequest.FromString(encode_spans(finished))
    assert [len(r.scope_spans) for r in request.resource_spans] == [2]


# Attribute values the SDK keeps (after its own cleaning): scalars, and homogeneous tuples.
_scalars = st.one_of(
    st.text(max_size=40),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.binary(max_size=20),
)
_values = st.one_of(
    _scalars,
    st.lists(st.text(max_size=8), max_size=4).map(tuple),
    st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=4).map(tuple),
    st.lists(st.booleans(), max_size=4).map(tuple),
    st.lists(st.floats(allow_nan=False), max_size=4).map(tuple),
)
_attributes = st.dictionaries(st.text(min_size=1, max_size=12), _values, max_size=6)
_ids = st.integers(min_value=1, max_value=2**64 - 1)
_trace_ids = st.integers(min_value=1, max_value=2**128 - 1)


_links = st.lists(st.tuples(_trace_ids, _ids, st.booleans(), _attributes), max_size=2)


@st.composite
def span_specs(draw: st.DrawFn) -> dict[str, Any]:
    parent = draw(
        st.one_of(
            st.none(),
            st.tuples(_trace_ids, _ids, st.booleans(), st.sampled_from(["", "k=v", "a=1,b=2"])),
        )
    )
    return {
        "name": draw(st.text(max_size=30)),
        "kind": draw(st.sampled_from(list(SpanKind))),
        "attributes": draw(_attributes),
        "events": draw(st.lists(st.tuples(st.text(max_size=10), _attributes), max_size=3)),
        "links": draw(
            st.lists(st.tuples(_trace_ids, _ids, st.booleans(), _attributes), max_size=2)
        ),
        "status": draw(st.sampled_from(["unset", "ok", "error"])),
        "message": draw(st.text(max_size=20)),
        "parent": parent,
        "tracer": draw(st.integers(min_value=0, max_value=2)),
        "provider": draw(st.integers(min_value=0, max_value=1)),
    }


def make_spans(specs: list[dict[str, Any]]) -> tuple[ReadableSpan, ...]:
    memory = InMemorySpanExporter()
    providers = [provider(memory, name="a"), provider(memory, name="b")]
    tracers = [
        [
            p.get_tracer("bridge"),
            p.get_tracer("tools", "0.1"),
            p.get_tracer("scoped", "2", schema_url="https://example.com/1", attributes={"x": 1}),
        ]
        for p in providers
    ]
    for spec in specs:
        context = None
        if spec["parent"] is not None:
            trace_id, span_id, remote, state = spec["parent"]
            parent = SpanContext(
                trace_id,
                span_id,
                is_remote=remote,
                trace_flags=TraceFlags(1),
                trace_state=TraceState.from_header([state]) if state else None,
            )
            context = trace.set_span_in_context(NonRecordingSpan(parent))
        links = [
            Link(SpanContext(t, s, is_remote=remote), attributes)
            for t, s, remote, attributes in spec["links"]
        ]
        tracer = tracers[spec["provider"]][spec["tracer"]]
        span = tracer.start_span(
            spec["name"],
            context=context,
            kind=spec["kind"],
            attributes=spec["attributes"],
            links=links,
        )
        for name, attributes in spec["events"]:
            span.add_event(name, attributes)
        if spec["status"] == "ok":
            span.set_status(trace.StatusCode.OK)
        elif spec["status"] == "error":
            span.set_status(trace.StatusCode.ERROR, spec["message"])
        span.end()
    return memory.get_finished_spans()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(span_specs(), max_size=6))
def test_any_batch_encodes_as_the_sdk_encodes_it(specs: list[dict[str, Any]]) -> None:
    spans = make_spans(specs)
    assert encode_spans(spans) == sdk_bytes(spans)


def test_special_numbers_encode_as_the_sdk_encodes_them() -> None:
    """Floats whose bits are not their value's default (-0.0, infinities, NaN) and the
    int64 extremes; proto3 leaves nothing out of a ``oneof``."""
    values: dict[str, Any] = {
        "neg_zero": -0.0,
        "zero": 0.0,
        "inf": math.inf,
        "ninf": -math.inf,
        "nan": math.nan,
        "min": -(2**63),
        "max": 2**63 - 1,
        "false": False,
        "empty": "",
        "no_bytes": b"",
        "empty_list": (),
    }
    spans = make_spans(
        [
            {
                "name": "",
                "kind": SpanKind.INTERNAL,
                "attributes": values,
                "events": [],
                "links": [],
                "status": "unset",
                "message": "",
                "parent": None,
                "tracer": 0,
                "provider": 0,
            }
        ]
    )
    assert encode_spans(spans) == sdk_bytes(spans)


@pytest.fixture
def collector() -> Iterator[LoopbackCollector]:
    with loopback_collector() as running:
        yield running


def test_exporter_posts_the_sdk_bytes_over_http(
    collector: LoopbackCollector,
) -> None:
    endpoint, bodies = f"{collector.url}/v1/traces", collector.bodies
    exporter = OtlpHttpSpanExporter(endpoint=endpoint)
    assert exporter.encodes_spans  # the installed SDK exposes the client this relies on
    memory = InMemorySpanExporter()
    with provider(memory).get_tracer("t").start_as_current_span("served", attributes={"a": "b"}):
        pass
    spans = memory.get_finished_spans()
    assert exporter.export(spans) is SpanExportResult.SUCCESS
    exporter.shutdown()
    assert bodies == [("/v1/traces", "application/x-protobuf", sdk_bytes(spans))]


def test_exporter_leaves_export_to_the_sdk_when_its_metrics_are_on(
    collector: LoopbackCollector, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK records its export metrics around its own encoding: with them on, the batch
    goes through the SDK's ``export`` (same bytes, its metrics recorded)."""
    monkeypatch.setenv(SDK_METRICS_ENV, "true")
    endpoint, bodies = f"{collector.url}/v1/traces", collector.bodies
    exporter = OtlpHttpSpanExporter(endpoint=endpoint)
    assert not exporter.encodes_spans
    memory = InMemorySpanExporter()
    with provider(memory).get_tracer("t").start_as_current_span("served"):
        pass
    spans = memory.get_finished_spans()
    assert exporter.export(spans) is SpanExportResult.SUCCESS
    exporter.shutdown()
    assert [body for _, _, body in bodies] == [sdk_bytes(spans)]


def test_a_refused_export_is_a_failure(
    collector: LoopbackCollector,
) -> None:
    """A collector's 400 (not retryable): the batch is reported failed, nothing raised."""
    endpoint, bodies = f"{collector.url}/v1/traces", collector.bodies
    collector.status = 400
    exporter = OtlpHttpSpanExporter(endpoint=endpoint)
    memory = InMemorySpanExporter()
    with provider(memory).get_tracer("t").start_as_current_span("served"):
        pass
    assert exporter.export(memory.get_finished_spans()) is SpanExportResult.FAILURE
    exporter.shutdown()
    assert len(bodies) == 1


def test_trpc_bridge_serve_exports_its_spans_over_otlp(
    collector: LoopbackCollector,
) -> None:
    """The whole path as users run it: ``trpc-bridge serve`` with an OTLP endpoint set
    exports the SERVER span of a call, under the caller's trace, to the collector."""
    endpoint, bodies = f"{collector.url}/v1/traces", collector.bodies
    env = {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_SERVICE_NAME": "otlp-test",
    }
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    message = {
        "kind": "message",
        "messageId": "m-otlp",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
    }
    params = {"message": message}
    with bridge_server("trpc_bridge.agents.scenarios:text", env=env) as server:
        response = httpx.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": params},
            headers={"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"},
            timeout=30,
        )
        assert "result" in response.json()
        deadline = time.monotonic() + 30
        while not bodies and time.monotonic() < deadline:
            time.sleep(0.05)
    assert bodies, "no OTLP export reached the collector"
    path, content_type, body = bodies[0]
    assert (path, content_type) == ("/v1/traces", "application/x-protobuf")
    request = ExportTraceServiceRequest.FromString(body)
    (resource,) = request.resource_spans
    service = {kv.key: kv.value.string_value for kv in resource.resource.attributes}
    assert service["service.name"] == "otlp-test"
    (span,) = [s for scope in resource.scope_spans for s in scope.spans]
    assert span.name == "invoke_agent weather-agent"  # the scenario agents are named so
    assert span.trace_id.hex() == trace_id
    assert span.parent_span_id.hex() == "00f067aa0ba902b7"
    attributes = {kv.key: kv.value.string_value for kv in span.attributes}
    assert attributes["a2a.transport"] == "JSONRPC"
    assert attributes["a2a.protocol.version"] == "0.3"
