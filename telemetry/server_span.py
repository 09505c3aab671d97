"""The SERVER ``invoke_agent`` span of one message call, and trace context forwarding.

:class:`ServerSpans` is the one span policy of the serving side: the bridge's agent
runner opens its span for every front door (A2A on each transport, AG-UI, …), and the
ASGI middleware and gRPC interceptor of :mod:`trpc_bridge.telemetry.server` open the same
span for plain a2a-sdk servers. The span is the current span while the agent runs, so the
agent's own spans (tools, outgoing calls) become its children.

A missing or malformed ``traceparent`` simply starts a new trace: extraction never
raises, and nothing here can fail a request. With tracing off no span is opened, but an
incoming trace context is still made current (W3C's "forward what you do not take part
in"), so a bridge in the middle of a chain — a proxy — passes the caller's
``traceparent`` / ``baggage`` on unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import Token
from types import TracebackType

from opentelemetry import context as otel_context
from opentelemetry import trace

from trpc_bridge.names import USER_ID_KEY
from trpc_bridge.telemetry.lean_span import LeanTracer
from trpc_bridge.telemetry.spans import (
    NOT_FAILURES,
    AgentCall,
    content_recording,
    get_tracer,
    invoke_agent_attributes,
    invoke_agent_span_name,
    record_failure,
    tracing_enabled,
)
from trpc_bridge.telemetry.trace_context import extract


class ServerSpans:
    """The SERVER ``invoke_agent`` span policy: the agent runner's, and the middleware's and
    interceptor's for plain a2a-sdk servers."""

    def __init__(
        self,
        agent_name: str,
        tracer_provider: trace.TracerProvider | None = None,
        record_content: bool | None = None,
        user_id_header: str = USER_ID_KEY,
    ) -> None:
        self.agent_name = agent_name
        self.span_name = invoke_agent_span_name(agent_name)
        self.provider = tracer_provider
        self.tracer = get_tracer(tracer_provider)
        self._lean = LeanTracer.of(self.tracer)
        self.record_content = content_recording(record_content)
        self.user_id_header = user_id_header.lower()

    def span(self, carrier: Mapping[str, str], call: AgentCall) -> ServerSpanScope:
        """The SERVER span of ``call``, opened under the caller's context (``carrier``'s
        ``traceparent``, ``tracestate`` and ``baggage``); current while the scope is
        entered."""
        parent = extract(carrier)
        attributes = invoke_agent_attributes(
            self.agent_name, call, record_content=self.record_content
        )
        if self._lean is not None:
            return ServerSpanScope(self._lean.start(self.span_name, parent, attributes), parent)
        span = self.tracer.start_span(
            self.span_name,
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        )
        return ServerSpanScope(span, parent)

    def serving(
        self, carrier: Mapping[str, str], call: AgentCall
    ) -> AbstractContextManager[trace.Span | None]:
        """What a message call runs inside: its SERVER span with tracing on (yielded); with
        tracing off only the caller's trace context, forwarded (:func:`forwarded_context`),
        and ``None``."""
        if tracing_enabled(self.provider):
            return self.span(carrier, call)
        return forwarded_context(carrier)


class ServerSpanScope:
    """Makes a SERVER span current, with the caller's context (and so its baggage) around
    it; on exit marks the span failed by an exception that is a failure, ends it and
    restores the previous context.

    One ``attach`` and a plain class: ``start_as_current_span`` nests two generator
    context managers and a second attach around the same work, about a third of the
    span's cost on the serving path (``bench/tracing_instructions.py`` counts it).
    """

    __slots__ = ("_parent", "_span", "_token")

    def __init__(self, span: trace.Span, parent: otel_context.Context) -> None:
        self._span = span
        self._parent = parent
        self._token: Token[otel_context.Context] | None = None

    def __enter__(self) -> trace.Span:
        self._token = otel_context.attach(trace.set_span_in_context(self._span, self._parent))
        return self._span

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        try:
            if exc is not None and not isinstance(exc, NOT_FAILURES):
                record_failure(self._span, exc)
        finally:
            self._span.end()
            if self._token is not None:
                otel_context.detach(self._token)


PROPAGATED = frozenset({"traceparent", "tracestate", "baggage"})


@contextmanager
def forwarded_context(carrier: Mapping[str, str]) -> Iterator[None]:
    """Tracing off: make the caller's trace context current (no span), so that outgoing
    calls made while handling the request carry it on."""
    if not PROPAGATED.intersection(carrier):
        yield
        return
    token = otel_context.attach(extract(carrier))
    try:
        yield
    finally:
        otel_context.detach(token)
