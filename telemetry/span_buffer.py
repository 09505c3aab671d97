"""A bounded in-memory buffer of recent spans, by trace: what the playground's trace view
draws.

Two sources fill it. :class:`SpanBuffer` is a span processor: every span this process
ends is kept (as the SDK's span object; it is read into JSON only when asked for).
:meth:`SpanBuffer.add_otlp` takes an OTLP/HTTP protobuf export
(``ExportTraceServiceRequest``) from another process — an upstream agent that exports its
spans to the bridge (``OTEL_EXPORTER_OTLP_ENDPOINT`` pointing at it) — so that a proxied
call shows the Go agent's own spans under the same trace.

The buffer keeps the last :attr:`max_traces` traces and at most :attr:`max_spans` spans
of each; older traces are dropped whole. Attribute values are cut to
:data:`VALUE_LIMIT` characters. It holds what spans hold (no credentials: spans never
carry one), and it is served only where the server enables it (by default on a loopback
bind: see ``docs/operations.md``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import SpanKind

#: Attribute values longer than this are cut (the page shows a line per attribute).
VALUE_LIMIT = 300
DEFAULT_MAX_TRACES = 200
DEFAULT_MAX_SPANS = 500

_KIND_NAMES = {
    SpanKind.INTERNAL: "INTERNAL",
    SpanKind.SERVER: "SERVER",
    SpanKind.CLIENT: "CLIENT",
    SpanKind.PRODUCER: "PRODUCER",
    SpanKind.CONSUMER: "CONSUMER",
}
#: OTLP's ``Span.SpanKind`` numbers (0 = unspecified).
_OTLP_KINDS = {0: "INTERNAL", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
#: OTLP's ``Status.StatusCode`` numbers.
_OTLP_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


class OtlpError(ValueError):
    """A body that is not an OTLP ``ExportTraceServiceRequest``."""


@dataclass(frozen=True)
class BufferedSpan:
    """One span as the trace view shows it (times in Unix nanoseconds)."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: str
    service: str
    start: int
    end: int
    status: str
    attributes: Mapping[str, str]


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= VALUE_LIMIT else text[: VALUE_LIMIT - 1] + "…"


def _from_sdk(span: ReadableSpan) -> BufferedSpan:
    context = span.get_span_context()
    assert context is not None  # an ended SDK span always has one
    parent = span.parent
    service = span.resource.attributes.get("service.name", "")
    return BufferedSpan(
        trace_id=f"{context.trace_id:032x}",
        span_id=f"{context.span_id:016x}",
        parent_span_id=f"{parent.span_id:016x}" if parent is not None else "",
        name=span.name,
        kind=_KIND_NAMES.get(span.kind, "INTERNAL"),
        service=_text(service),
        start=span.start_time or 0,
        end=span.end_time or span.start_time or 0,
        status=span.status.status_code.name,
        attributes={key: _text(value) for key, value in (span.attributes or {}).items()},
    )


class SpanBuffer(SpanProcessor):
    """The buffer (see the module doc); safe to feed from any thread."""

    def __init__(
        self, *, max_traces: int = DEFAULT_MAX_TRACES, max_spans: int = DEFAULT_MAX_SPANS
    ) -> None:
        self.max_traces = max_traces
        self.max_spans = max_spans
        #: trace id (int) → its spans, oldest trace first: SDK spans or read OTLP spans.
        self._traces: OrderedDict[int, list[ReadableSpan | BufferedSpan]] = OrderedDict()
        self._lock = threading.Lock()

    # --- SpanProcessor ---------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        context = span.context
        if context is not None:
            self._add(context.trace_id, span)

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    # --- other processes' spans ------------------------------------------------------------

    def add_otlp(self, body: bytes) -> int:
        """Keep the spans of an OTLP/HTTP protobuf trace export; returns how many.
        Raises :class:`OtlpError` for a body that is not one."""
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        try:
            request = ExportTraceServiceRequest.FromString(body)
        except DecodeError:
            raise OtlpError("the body is not an OTLP ExportTraceServiceRequest") from None
        count = 0
        for resource_spans in request.resource_spans:
            service = ""
            for attribute in resource_spans.resource.attributes:
                if attribute.key == "service.name":
                    service = attribute.value.string_value
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    if len(span.trace_id) != 16 or len(span.span_id) != 8:
                        continue  # not a valid span: nothing to draw it under
                    self._add(int.from_bytes(span.trace_id, "big"), _from_otlp(span, service))
                    count += 1
        return count

    # --- reading ---------------------------------------------------------------------------

    def _add(self, trace_id: int, span: ReadableSpan | BufferedSpan) -> None:
        with self._lock:
            spans = self._traces.get(trace_id)
            if spans is None:
                spans = self._traces[trace_id] = []
                while len(self._traces) > self.max_traces:
                    self._traces.popitem(last=False)
            if len(spans) < self.max_spans:
                spans.append(span)

    def spans(self, trace_id: str) -> list[BufferedSpan]:
        """The kept spans of ``trace_id`` (32 hex digits), in start order; empty when the
        trace is unknown (or the id malformed)."""
        try:
            key = int(trace_id, 16)
        except ValueError:
            return []
        with self._lock:
            kept = list(self._traces.get(key, ()))
        read = [span if isinstance(span, BufferedSpan) else _from_sdk(span) for span in kept]
        return sorted(read, key=lambda span: (span.start, span.end))


def _from_otlp(span: Any, service: str) -> BufferedSpan:
    attributes = {attribute.key: _any_value(attribute.value) for attribute in span.attributes}
    return BufferedSpan(
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_span_id=span.parent_span_id.hex() if len(span.parent_span_id) == 8 else "",
        name=_text(span.name),
        kind=_OTLP_KINDS.get(span.kind, "INTERNAL"),
        service=_text(service),
        start=span.start_time_unix_nano,
        end=max(span.end_time_unix_nano, span.start_time_unix_nano),
        status=_OTLP_STATUS.get(span.status.code, "UNSET"),
        attributes=attributes,
    )


def _any_value(value: Any) -> str:
    """An OTLP ``AnyValue`` as a line of text."""
    kind = value.WhichOneof("value")
    if kind is None:
        return ""
    if kind == "array_value":
        return _text(", ".join(_any_value(v) for v in value.array_value.values))
    if kind == "kvlist_value":
        pairs = (f"{kv.key}={_any_value(kv.value)}" for kv in value.kvlist_value.values)
        return _text(", ".join(pairs))
    if kind == "bytes_value":
        return _text(value.bytes_value.hex())
    return _text(getattr(value, kind))


def trace_json(spans: Sequence[BufferedSpan]) -> dict[str, Any]:
    """The trace view's JSON: times in microseconds from the trace's first start (a Unix
    time in nanoseconds does not fit a JavaScript number)."""
    origin = min((span.start for span in spans), default=0)
    return {
        "spans": [
            {
                "traceId": span.trace_id,
                "spanId": span.span_id,
                "parentSpanId": span.parent_span_id,
                "name": span.name,
                "kind": span.kind,
                "service": span.service,
                "startUs": (span.start - origin) / 1000,
                "durationUs": (span.end - span.start) / 1000,
                "status": span.status,
                "attributes": dict(span.attributes),
            }
            for span in spans
        ]
    }
