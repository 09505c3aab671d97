"""The hot path's histogram records give the SDK's aggregations the same data as
``Histogram.record`` (bucket counts, sum, count, min, max per attribute set), and fall
back to ``record`` where they cannot (delta temporality, another aggregation); every hook
of the bridge's metrics exports the same Prometheus text and OTLP bytes either way."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from prometheus_client import CollectorRegistry, generate_latest

from trpc_bridge.events import AgentEvent, Usage
from trpc_bridge.telemetry import histogram_records, run_meters
from trpc_bridge.telemetry import metrics as bridge_metrics
from trpc_bridge.telemetry.histogram_records import HistogramRecords

SETS: list[dict[str, Any]] = [{"a": "x", "n": 1}, {"a": "y"}, {}]


def _points(reader: InMemoryMetricReader) -> dict[Any, tuple[Any, ...]]:
    data = reader.get_metrics_data()
    if data is None:  # nothing recorded yet
        return {}
    points: list[Any] = [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
    ]
    return {
        tuple(sorted((point.attributes or {}).items())): (
            tuple(point.bucket_counts),
            point.count,
            round(point.sum, 9),
            point.min,
            point.max,
        )
        for point in points
    }


def _histogram(reader: InMemoryMetricReader) -> Any:
    provider = MeterProvider(metric_readers=[reader], exemplar_filter=AlwaysOffExemplarFilter())
    return provider.get_meter("t").create_histogram("h", unit="s")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.floats(0, 100, allow_nan=False)), max_size=40))
def test_the_fast_path_aggregates_as_record_does(values: list[tuple[int, float]]) -> None:
    public_reader, fast_reader = InMemoryMetricReader(), InMemoryMetricReader()
    public, fast = _histogram(public_reader), _histogram(fast_reader)
    records = HistogramRecords()
    for index, value in values:
        public.record(value, SETS[index])
        records.record(fast, index, SETS[index], value)
    assert _points(fast_reader) == _points(public_reader)
    # Later records after a collection still land (cumulative: the same aggregations).
    public.record(1.5, SETS[0])
    records.record(fast, 0, SETS[0], 1.5)
    assert _points(fast_reader) == _points(public_reader)


def test_a_delta_reader_gets_every_record_through_record() -> None:
    reader = InMemoryMetricReader(preferred_temporality={Histogram: AggregationTemporality.DELTA})
    histogram = _histogram(reader)
    records = HistogramRecords()
    for value in (1.0, 2.0):
        records.record(histogram, 0, SETS[0], value)
    assert [v[1] for v in _points(reader).values()] == [2]
    records.record(histogram, 0, SETS[0], 3.0)  # a fresh aggregation after the collection
    assert [v[1:3] for v in _points(reader).values()] == [(1, 3.0)]


def test_an_exponential_view_gets_every_record_through_record() -> None:
    reader = InMemoryMetricReader()
    view = View(instrument_name="h", aggregation=ExponentialBucketHistogramAggregation())
    provider = MeterProvider(
        metric_readers=[reader], exemplar_filter=AlwaysOffExemplarFilter(), views=[view]
    )
    histogram = provider.get_meter("t").create_histogram("h")
    records = HistogramRecords()
    for value in (1.0, 2.0, 4.0):
        records.record(histogram, 0, SETS[0], value)
    assert records.bind(histogram, 0, SETS[0])._aggregations is None
    point = next(iter(_data_points(reader)))
    assert (point.count, point.sum) == (3, 7.0)


def _data_points(reader: InMemoryMetricReader) -> list[Any]:
    data = reader.get_metrics_data()
    assert data is not None
    return [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
    ]


def _served(provider: MeterProvider) -> None:
    """The same calls of every hook of the bridge's metrics, with the same clock."""
    ticks = iter(range(10_000))
    with pytest.MonkeyPatch.context() as patch:
        clock = lambda: next(ticks) * 0.0137  # noqa: E731
        patch.setattr(bridge_metrics, "perf_counter", clock)
        patch.setattr(run_meters, "perf_counter", clock)
        served = bridge_metrics.BridgeMetrics(provider)
        for method, status in [("POST", 200), ("GET", 404), ("BREW", 200), ("POST", 503)] * 3:
            served.http_request(method, status, next(ticks) * 0.001, "http")
        served.http_request("POST", 200, next(ticks) * 0.001, "https")
        for round_ in range(3):
            for streamed, end in [(True, "ok"), (False, "ok"), (True, "error"), (True, "cancel")]:
                meter = served.run(
                    "agent", transport="JSONRPC", protocol_version="0.3",
                    encoding="trpc", streamed=streamed,
                )  # fmt: skip
                for index in range(3 + round_):
                    meter.observe(AgentEvent.text_delta(f"d{index}", "r"))
                    meter.relayed()
                final = AgentEvent.final_text("done", "r")
                final.usage = Usage(prompt_tokens=7, completion_tokens=3, total_tokens=10)
                meter.observe(final if end != "error" else AgentEvent.failure("no", type="run"))
                meter.end(cancelled=end == "cancel")
            call = served.client_call("remote", transport="GRPC", protocol_version="1.0")
            call.observe(final)
            call.end()
            served.stream_opened("JSONRPC")
            with served.store_call("get"):
                pass
            served.fanout_lag(0.25 * round_, "redis")
            served.push_delivery("delivered")
            served.rpc_call("a2a.v1.A2AService", "SendMessage", 0, 1.5)


def _exports(fast: bool) -> tuple[bytes, bytes]:
    """The Prometheus text and the OTLP metrics request (times zeroed: the two providers
    collect at different moments) after :func:`_served`, with the fast path or without."""
    registry = CollectorRegistry(auto_describe=True)
    reader = InMemoryMetricReader()
    provider = MeterProvider(
        metric_readers=[PrometheusMetricReader(registry=registry), reader],
        exemplar_filter=AlwaysOffExemplarFilter(),
        resource=Resource.create({"service.name": "t"}),
    )
    with pytest.MonkeyPatch.context() as patch:
        if not fast:
            patch.setattr(histogram_records, "_aggregations", lambda *_: None)
        _served(provider)
    data = reader.get_metrics_data()
    assert data is not None
    request = encode_metrics(data)
    for resource in request.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                kind = metric.WhichOneof("data")
                for point in getattr(metric, kind).data_points:
                    point.start_time_unix_nano = point.time_unix_nano = 0
    return generate_latest(registry), request.SerializeToString()


def test_the_bridges_metrics_export_what_the_sdks_records_export() -> None:
    """Byte for byte, Prometheus text and OTLP: every hook of ``BridgeMetrics`` through the
    fast path, and through ``Histogram.record`` only."""
    fast_text, fast_otlp = _exports(fast=True)
    sdk_text, sdk_otlp = _exports(fast=False)
    assert b"gen_ai_server_request_duration_seconds_bucket" in fast_text
    assert fast_text == sdk_text
    assert fast_otlp == sdk_otlp
