"""The caller's W3C trace context, read from request headers (or gRPC metadata).

:data:`W3C_PROPAGATOR` is the propagator the bridge installs (``traceparent`` /
``tracestate`` plus ``baggage``: what trpc-agent-go reads and writes; ``traceparent``
written in its level 1 form, :class:`Level1TraceContext`). :func:`extract`
is ``propagate.extract`` with one shortcut: while that propagator is the global one, a
carrier holding only a well-formed ``traceparent`` in its canonical form (55 characters,
lower-case hex; no ``tracestate``, no ``baggage``) is read here, by the W3C Trace Context
rules the SDK's propagator applies, to the same context at a quarter of the cost
(its composite, regular expression and getter run on every served call). Anything
else — another propagator installed, a ``tracestate`` or ``baggage`` to parse, a header
in any other form, valid or not — goes to ``propagate.extract`` unchanged.
``tests/telemetry/test_trace_context.py`` compares both on generated headers.
"""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry import propagate, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.context import Context
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.propagators.textmap import CarrierT, Setter, default_setter
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator


class Level1TraceContext(TraceContextTextMapPropagator):
    """The W3C propagator, writing ``traceparent`` flags as Trace Context level 1 defines
    them: the sampled bit only.

    The SDK marks every trace it starts with level 2's random-trace-id flag (``-03``
    for a sampled one); OpenTelemetry Go before level 2 support — the release
    trpc-agent-go pins — refuses a version-00 header with any flag beyond ``sampled``
    and so drops the whole trace context: the Go agent's spans would start a trace of
    their own. Reading stays the SDK's (it takes either form)."""

    def inject(
        self,
        carrier: CarrierT,
        context: Context | None = None,
        setter: Setter[CarrierT] = default_setter,
    ) -> None:
        span_context = trace.get_current_span(context).get_span_context()
        flags = span_context.trace_flags
        if flags & ~trace.TraceFlags.SAMPLED:
            level1 = trace.SpanContext(
                trace_id=span_context.trace_id,
                span_id=span_context.span_id,
                is_remote=span_context.is_remote,
                trace_flags=trace.TraceFlags(flags & trace.TraceFlags.SAMPLED),
                trace_state=span_context.trace_state,
            )
            context = trace.set_span_in_context(trace.NonRecordingSpan(level1), context)
        super().inject(carrier, context, setter)


W3C_PROPAGATOR = CompositePropagator([Level1TraceContext(), W3CBaggagePropagator()])

_HEX = frozenset("0123456789abcdef")
#: version "-" trace-id "-" parent-id "-" flags, without any later fields.
_CANONICAL_LENGTH = 55


def extract(carrier: Mapping[str, str]) -> Context:
    """``propagate.extract(carrier)``, the same context (see the module doc)."""
    header = carrier.get("traceparent")
    if (
        type(header) is not str
        or len(header) != _CANONICAL_LENGTH
        or propagate.get_global_textmap() is not W3C_PROPAGATOR
        or "tracestate" in carrier
        or "baggage" in carrier
    ):
        return propagate.extract(carrier)
    version, trace_hex, span_hex, flags = header[:2], header[3:35], header[36:52], header[53:]
    if (
        header[2] != "-"
        or header[35] != "-"
        or header[52] != "-"
        or not _HEX.issuperset(version + trace_hex + span_hex + flags)
    ):
        return propagate.extract(carrier)
    trace_id, span_id = int(trace_hex, 16), int(span_hex, 16)
    if version == "ff" or not trace_id or not span_id:  # invalid: no parent
        return Context()
    span_context = trace.SpanContext(
        trace_id=trace_id,
        span_id=span_id,
        is_remote=True,
        trace_flags=trace.TraceFlags(int(flags, 16)),
        trace_state=None,
    )
    return trace.set_span_in_context(trace.NonRecordingSpan(span_context), Context())
