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
from contextlib import contextmanager

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace

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

#: trpc-agent-go's default identity header (``WithUserIDHeader``), as gRPC/ASGI spell it.
DEFAULT_USER_ID_HEADER = "x-user-id"


class ServerSpans:
    """The SERVER ``invoke_agent`` span policy: the agent runner's, and the middleware's and
    interceptor's for plain a2a-sdk servers."""

    def __init__(
        self,
        agent_name: str,
        tracer_provider: trace.TracerProvider | None = None,
        record_content: bool | None = None,
        user_id_header: str = DEFAULT_USER_ID_HEADER,
    ) -> None:
        self.agent_name = agent_name
        self.provider = tracer_provider
        self.tracer = get_tracer(tracer_provider)
        self.record_content = content_recording(record_content)
        self.user_id_header = user_id_header.lower()

    @contextmanager
    def span(self, carrier: Mapping[str, str], call: AgentCall) -> Iterator[trace.Span]:
        """Make the caller's context current and open the SERVER span under it.

        The extracted context (with its baggage) is attached first, so that baggage is
        current in the handler too, not only the span.
        """
        token = otel_context.attach(propagate.extract(carrier))
        try:
            attributes = invoke_agent_attributes(
                self.agent_name, call, record_content=self.record_content
            )
            with self.tracer.start_as_current_span(
                invoke_agent_span_name(self.agent_name),
                kind=trace.SpanKind.SERVER,
                attributes=attributes,
                record_exception=False,
                set_status_on_exception=False,
            ) as span:
                try:
                    yield span
                except NOT_FAILURES:
                    raise
                except BaseException as exc:
                    record_failure(span, exc)
                    raise
        finally:
            otel_context.detach(token)

    @contextmanager
    def serving(self, carrier: Mapping[str, str], call: AgentCall) -> Iterator[trace.Span | None]:
        """What a message call runs inside: its SERVER span with tracing on (yielded); with
        tracing off only the caller's trace context, forwarded (:func:`forwarded_context`),
        and ``None``."""
        if tracing_enabled(self.provider):
            with self.span(carrier, call) as span:
                yield span
        else:
            with forwarded_context(carrier):
                yield None


PROPAGATED = frozenset({"traceparent", "tracestate", "baggage"})


@contextmanager
def forwarded_context(carrier: Mapping[str, str]) -> Iterator[None]:
    """Tracing off: make the caller's trace context current (no span), so that outgoing
    calls made while handling the request carry it on."""
    if not PROPAGATED.intersection(carrier):
        yield
        return
    token = otel_context.attach(propagate.extract(carrier))
    try:
        yield
    finally:
        otel_context.detach(token)
