"""The hot path's histogram records give the SDK's aggregations the same data as
``Histogram.record`` (bucket counts, sum, count, min, max per attribute set), and fall
back to ``record`` where they cannot (delta temporality)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader

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
