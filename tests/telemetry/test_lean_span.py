"""The lean SERVER span (``telemetry/lean_span.py``) is the span ``Tracer.start_span``
makes: with the same ids and times, the SDK's encoder and the bridge's write the same
OTLP bytes for both — a root span, a remote parent's child, annotated, failed — and an
unsampled parent gives the same non-recording span. A tracer it cannot stand in for (a
sampler or limits of its own) keeps the SDK's path."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as sdk_encode
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from trpc_bridge.telemetry.lean_span import LeanTracer
from trpc_bridge.telemetry.otlp_encode import encode_spans
from trpc_bridge.telemetry.server_span import ServerSpans
from trpc_bridge.telemetry.spans import AgentCall, annotate_current_span, record_failure
from trpc_bridge.telemetry.trace_context import extract

CALL = AgentCall(
    transport="JSONRPC", protocol_version="0.3", conversation_id="ctx-1", task_id="task-1"
)
SAMPLED = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
UNSAMPLED = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"


class _Counting(IdGenerator):
    def __init__(self) -> None:
        self._ids = itertools.count(1)

    def generate_span_id(self) -> int:
        return next(self._ids)

    def generate_trace_id(self) -> int:
        return 0xABC0 + next(self._ids)


def _served(lean: bool, carrier: dict[str, str], *, fail: bool = False) -> list[ReadableSpan]:
    """One SERVER span as the runner opens it, through the lean path or the SDK's."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(id_generator=_Counting())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spans = ServerSpans("weather-agent", provider)
    if not lean:
        spans._lean = None
    assert (spans._lean is not None) == lean
    scope = spans.span(carrier, CALL)
    with scope as span:
        span._start_time = 1_000  # type: ignore[attr-defined]
        annotate_current_span(task_id="task-2")
        if fail:
            record_failure(span, ValueError("boom"))
        span.end(end_time=2_000)
    return list(exporter.get_finished_spans())


@pytest.mark.parametrize("carrier", [{}, {"traceparent": SAMPLED}], ids=["root", "child"])
@pytest.mark.parametrize("fail", [False, True], ids=["ok", "failed"])
def test_the_lean_span_exports_the_sdks_bytes(carrier: dict[str, str], fail: bool) -> None:
    lean, sdk = _served(True, carrier, fail=fail), _served(False, carrier, fail=fail)
    assert len(lean) == len(sdk) == 1
    if fail:  # the exception event's time: the same clock reading stands for both
        for spans in (lean, sdk):
            spans[0].events[0]._timestamp = 3_000
    assert encode_spans(lean) == encode_spans(sdk)
    assert sdk_encode(lean).SerializePartialToString() == encode_spans(sdk)
    assert dict(lean[0].attributes or {}) == dict(sdk[0].attributes or {})


def test_an_unsampled_parent_gives_the_same_non_recording_span() -> None:
    provider = TracerProvider(id_generator=_Counting())
    lean = LeanTracer.of(provider.get_tracer("t"))
    assert lean is not None
    parent = extract({"traceparent": UNSAMPLED})
    span = lean.start("invoke_agent x", parent, {"a": "b"})
    expected = (
        TracerProvider(id_generator=_Counting())
        .get_tracer("t")
        .start_span(
            "invoke_agent x", context=parent, kind=trace.SpanKind.SERVER, attributes={"a": "b"}
        )
    )
    assert not span.is_recording() and not expected.is_recording()
    assert span.get_span_context() == expected.get_span_context()


@pytest.mark.parametrize(
    "provider",
    [
        TracerProvider(sampler=ALWAYS_ON),
        TracerProvider(span_limits=SpanLimits(max_span_attribute_length=8)),
    ],
    ids=["own sampler", "attribute length limit"],
)
def test_a_tracer_of_its_own_keeps_the_sdk_path(provider: Any) -> None:
    assert LeanTracer.of(provider.get_tracer("t")) is None
    assert LeanTracer.of(trace.NoOpTracer()) is None
