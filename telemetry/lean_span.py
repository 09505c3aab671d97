"""The SERVER ``invoke_agent`` span started without the SDK tracer's generic path.

The runner opens one SERVER span per served call. Through ``Tracer.start_span`` that
costs about as much as the rest of a unary call's tracing together: the sampler builds a
result with its own copy of the attributes, the span cleans and copies each attribute
into bounded containers and takes a lock of its own, and ending it copies the span once
more for the processors (``bench/tracing_instructions.py`` counts it). For the span the
bridge makes — its own few string attributes, the SDK's default sampler and limits —
:class:`LeanTracer` makes the same span directly: the same ids from the provider's id
generator, the same sampling decision, the same processors called with the same span
(an SDK ``Span``, read through the same ``ReadableSpan`` properties), so every
exporter sends the same bytes (``tests/telemetry/test_lean_span.py``). Any other
sampler or span limits and the tracer's own ``start_span`` is used instead.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from time import time_ns

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.attributes import _clean_attribute_value
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.trace import sampling
from opentelemetry.util.types import AttributeValue

#: What ``TracerProvider()`` samples with unless told otherwise.
_DEFAULT_SAMPLER: str = sampling.ParentBased(sampling.ALWAYS_ON).get_description()  # type: ignore[no-untyped-call]
#: Spans change under a lock in the SDK; a SERVER span is changed by its own request
#: only, so one lock serves them all.
_LOCK = threading.Lock()
#: Trace flags by their sampled (0x01) and random-trace-id (0x02) bits, and the sampling
#: decisions, made once: both are immutable, as is a span's status (``set_status``
#: replaces it).
_KEPT_FLAGS = trace.TraceFlags.SAMPLED | trace.TraceFlags.RANDOM_TRACE_ID
_FLAGS = [trace.TraceFlags(bits) for bits in range(_KEPT_FLAGS + 1)]
_RECORD_AND_SAMPLE = sampling.Decision.RECORD_AND_SAMPLE
_DROP = sampling.Decision.DROP
_UNSET = trace.Status(trace.StatusCode.UNSET)


class LeanTracer:
    """SERVER spans of ``tracer`` made directly (see the module doc). Build with
    :meth:`of`."""

    def __init__(self, tracer: sdk_trace.Tracer) -> None:
        self._tracer = tracer
        self._limits = tracer._span_limits
        #: A new trace's flags: sampled, and random ids when the generator makes them.
        random_ids = tracer.id_generator.is_trace_id_random()
        self._new_trace = trace.TraceFlags.SAMPLED | (
            trace.TraceFlags.RANDOM_TRACE_ID if random_ids else 0
        )

    @classmethod
    def of(cls, tracer: trace.Tracer) -> LeanTracer | None:
        """A lean tracer for ``tracer`` when it is an SDK tracer with the default
        sampler and no attribute length limit; else None."""
        if not isinstance(tracer, sdk_trace.Tracer):
            return None
        if tracer.sampler.get_description() != _DEFAULT_SAMPLER:
            return None
        if tracer._span_limits.max_span_attribute_length is not None:
            return None
        return cls(tracer)

    def start(
        self, name: str, parent: otel_context.Context, attributes: Mapping[str, AttributeValue]
    ) -> trace.Span:
        """A started SERVER span named ``name`` under ``parent``'s span context."""
        tracer = self._tracer
        most = self._limits.max_span_attributes
        if not tracer._is_enabled() or (most is not None and len(attributes) > most):
            return tracer.start_span(
                name,
                context=parent,
                kind=trace.SpanKind.SERVER,
                attributes=attributes,
                record_exception=False,
                set_status_on_exception=False,
            )
        parent_context = trace.get_current_span(parent).get_span_context()
        if parent_context.is_valid:  # the parent's sampled and random-trace-id flags
            trace_id = parent_context.trace_id
            flags = parent_context.trace_flags & _KEPT_FLAGS
            trace_state = parent_context.trace_state
            parent_span: trace.SpanContext | None = parent_context
        else:
            trace_id = tracer.id_generator.generate_trace_id()
            flags, trace_state, parent_span = self._new_trace, None, None
        context = trace.SpanContext(
            trace_id,
            tracer.id_generator.generate_span_id(),
            is_remote=False,
            trace_flags=_FLAGS[flags],
            trace_state=trace_state,
        )
        sampled = flags & trace.TraceFlags.SAMPLED
        decision = _RECORD_AND_SAMPLE if sampled else _DROP
        end_metrics = tracer._tracer_metrics.start_span(parent_span, decision)
        if not sampled:
            return trace.NonRecordingSpan(context)
        span = _ServerSpan(name, context, parent_span, tracer, dict(attributes), end_metrics)
        tracer.span_processor.on_start(span, parent_context=parent)
        return span


class _ServerSpan(sdk_trace.Span):
    """An SDK span built field by field; ended, it is its own readable span.

    Fields every such span starts with the same value of are class attributes, read
    through the instance until the span sets its own (``end``, ``set_status``)."""

    _kind = trace.SpanKind.SERVER
    _end_time: int | None = None
    _dropped = 0
    _status = _UNSET
    _trace_config = None
    _record_exception = False
    _set_status_on_exception = False
    _lock = _LOCK

    def __init__(
        self,
        name: str,
        context: trace.SpanContext,
        parent: trace.SpanContext | None,
        tracer: sdk_trace.Tracer,
        attributes: dict[str, AttributeValue],
        end_metrics: object,
    ) -> None:
        limits = tracer._span_limits
        # ReadableSpan's fields
        self._name = name
        self._context = context
        self._instrumentation_info = tracer.instrumentation_info
        self._instrumentation_scope = tracer._instrumentation_scope
        self._parent = parent
        self._start_time = time_ns()
        self._attributes = attributes
        # Plain lists: a SERVER span gets an event only for a failure, and links never.
        self._events = []
        self._links = []
        self._resource = tracer.resource
        # Span's fields
        self._sampler = tracer.sampler
        self._span_processor = tracer.span_processor
        self._limits = limits
        self._record_end_metrics = end_metrics  # type: ignore[assignment]

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        """As the SDK's ``BoundedAttributes``: a value other than a string cleaned, a key
        set again moved to the end, the oldest dropped (and counted) when full."""
        if self._end_time is not None:
            return
        if not key or not isinstance(key, str):
            self._dropped += 1
            return
        if type(value) is not str:
            value = _clean_attribute_value(value, None)
        attributes: dict[str, AttributeValue] = self._attributes  # type: ignore[assignment]
        attributes.pop(key, None)
        most = self._limits.max_span_attributes
        if most is not None and len(attributes) >= most:
            del attributes[next(iter(attributes))]
            self._dropped += 1
        attributes[key] = value

    @property
    def dropped_attributes(self) -> int:
        return self._dropped

    # Plain lists (see ``__init__``): nothing is dropped. The SDK's properties ask whether
    # they are its bounded lists, an abstract-class check, for each exported span.
    @property
    def dropped_events(self) -> int:
        return 0

    @property
    def dropped_links(self) -> int:
        return 0

    def set_attributes(self, attributes: Mapping[str, AttributeValue]) -> None:
        for key, value in attributes.items():
            self.set_attribute(key, value)

    def end(self, end_time: int | None = None) -> None:
        if self._end_time is not None:
            return
        self._end_time = end_time if end_time is not None else time_ns()
        if self._record_end_metrics:
            self._record_end_metrics()
        self._span_processor._on_ending(self)
        self._span_processor.on_end(self)
