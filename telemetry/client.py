"""Client side: the ``invoke_agent`` CLIENT span and W3C propagation on outgoing calls.

Propagation goes through a2a-sdk's ``ClientCallContext.service_parameters``, which the
SDK sends as HTTP headers on JSON-RPC and REST and as (lower-cased) metadata on gRPC, so
one interceptor covers all three transports and the 0.3 compat transports.

The span is deliberately *not* made the current span: callers iterate remote streams in
async generators, and a span attached across ``yield`` would leak into whatever the
consumer does between events (and could be detached from the wrong context). The span's
context travels explicitly instead, in the call context's ``state``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Iterator, MutableMapping
from contextlib import contextmanager

from a2a.client import ClientCallContext
from a2a.client.interceptors import AfterArgs, BeforeArgs, ClientCallInterceptor
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.metrics import MeterProvider

from trpc_bridge.agent import close_events
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.telemetry.metrics import metrics_for
from trpc_bridge.telemetry.run_meters import ClientCallMeter
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
from trpc_bridge.telemetry.tools import ToolSpans

#: ``ClientCallContext.state`` key holding the OTel context to propagate for that call.
OTEL_CONTEXT_STATE_KEY = "trpc_bridge.otel_context"


def inject_headers(
    headers: MutableMapping[str, str],
    *,
    context: otel_context.Context | None = None,
) -> MutableMapping[str, str]:
    """Add ``traceparent`` / ``tracestate`` / ``baggage`` for ``context`` (default: current).

    For code that sends its own HTTP requests (a raw httpx SSE reader). Adds nothing when
    there is no valid span context, like trpc-agent-go's ``extractTraceHeaders``. With
    tracing off the current context can still hold a caller's trace (see
    :func:`trpc_bridge.telemetry.server.forwarded_context`): that is passed on unchanged.
    """
    if context is None:
        context = otel_context.get_current()
    if context:  # an empty context holds no span and no baggage: nothing to send
        propagate.inject(headers, context=context)
    return headers


class TraceContextInterceptor(ClientCallInterceptor):
    """Puts the W3C trace headers of the call into its ``service_parameters``.

    The context comes from ``context.state[OTEL_CONTEXT_STATE_KEY]`` when the caller put
    one there (see :meth:`AgentInvocation.call_context`), else from the current context.
    """

    async def before(self, args: BeforeArgs) -> None:
        # Also with tracing off: a caller's context made current by the server side is
        # forwarded (propagate.inject adds nothing when there is no valid span context).
        explicit = args.context.state.get(OTEL_CONTEXT_STATE_KEY) if args.context else None
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=explicit)
        if not carrier:
            return
        if args.context is None:
            args.context = ClientCallContext()
        if args.context.service_parameters is None:
            args.context.service_parameters = {}
        args.context.service_parameters.update(carrier)

    async def after(self, args: AfterArgs) -> None:
        """Nothing to do: the interceptor opens no span (``after`` is skipped on errors)."""


class AgentInvocation:
    """One call to a remote agent as seen by the caller: its span and how to propagate it."""

    def __init__(
        self, span: trace.Span, context: otel_context.Context | None, tools: ToolSpans | None
    ) -> None:
        self.span = span
        #: The OTel context holding :attr:`span`; ``None`` when tracing is off.
        self.context = context
        self._tools = tools

    def call_context(self, base: ClientCallContext | None = None) -> ClientCallContext | None:
        """``base`` (or a new call context) carrying this span for the interceptor."""
        if self.context is None:
            return base
        call = base if base is not None else ClientCallContext()
        call.state[OTEL_CONTEXT_STATE_KEY] = self.context
        return call

    def inject(self, headers: MutableMapping[str, str]) -> MutableMapping[str, str]:
        """The W3C headers of this span, for a request sent without a2a-sdk's client."""
        if self.context is not None:
            propagate.inject(headers, context=self.context)
        return headers

    def observe(self, event: AgentEvent) -> None:
        """Feed each decoded event: a terminal error marks the call failed. The remote
        agent's tool calls are not spans here: the process that ran them records them."""
        if self._tools is not None:
            self._tools.observe(event)


#: A call described by its agent's name only.
_NO_DETAILS = AgentCall()


@contextmanager
def invoke_agent_span(
    agent_name: str,
    call: AgentCall = _NO_DETAILS,
    *,
    parent: otel_context.Context | None = None,
    tracer_provider: trace.TracerProvider | None = None,
    record_content: bool | None = None,
) -> Iterator[AgentInvocation]:
    """A CLIENT span ``invoke_agent {agent_name}`` around one remote agent call.

    Its parent is ``parent`` or the current context (e.g. the server span of a proxy).
    ``call.user_id`` and ``call.input_text`` are recorded only with ``record_content`` (or
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``). Pass
    ``invocation.call_context()`` to the a2a-sdk client so the interceptor propagates it.
    """
    if not tracing_enabled(tracer_provider):
        yield AgentInvocation(trace.INVALID_SPAN, None, None)
        return
    record = content_recording(record_content)
    attributes = invoke_agent_attributes(agent_name, call, record_content=record)
    span = get_tracer(tracer_provider).start_span(
        invoke_agent_span_name(agent_name),
        context=parent,
        kind=trace.SpanKind.CLIENT,
        attributes=attributes,
    )
    span_context = trace.set_span_in_context(span, parent)
    tools = ToolSpans(
        parent=span_context, tracer_provider=tracer_provider, record_content=record, tools=False
    )
    try:
        yield AgentInvocation(span, span_context, tools)
    except NOT_FAILURES:
        raise
    except BaseException as exc:
        record_failure(span, exc)
        raise
    finally:
        tools.close()
        span.end()


def trace_remote_run(
    events: AsyncIterator[AgentEvent],
    agent_name: str,
    request: AgentRequest,
    *,
    transport: str = "",
    protocol_version: str = "",
    tracer_provider: trace.TracerProvider | None = None,
    record_content: bool | None = None,
    meter_provider: MeterProvider | None = None,
    started: float | None = None,
) -> AsyncIterator[AgentEvent]:
    """A remote agent's event stream inside its ``invoke_agent`` CLIENT span, timed as
    ``gen_ai.client.operation.duration`` when metrics are on: from now, or from
    ``started`` (``time.perf_counter``) for a call whose request was sent before.

    The one-line hook for a remote-agent client: wrap the generator that sends the
    request and decodes the answer. The span's context is current only while that
    generator runs (one step at a time), so code in it that injects the *current*
    context (:func:`inject_headers`) propagates this span, and the consumer between
    events is left untouched. A terminal error event marks the span failed; the remote
    agent's tool calls are the remote process's spans, not this one's. With tracing and
    metrics off ``events`` comes back as is.
    """
    metrics = metrics_for(meter_provider)
    if metrics is not None:
        call = metrics.client_call(
            agent_name, transport=transport, protocol_version=protocol_version, started=started
        )
        events = _metered(events, call)
    if not tracing_enabled(tracer_provider):
        return events
    return _stepped(
        events,
        agent_name,
        request,
        transport=transport,
        protocol_version=protocol_version,
        tracer_provider=tracer_provider,
        record_content=record_content,
    )


async def _stepped(
    events: AsyncIterator[AgentEvent],
    agent_name: str,
    request: AgentRequest,
    *,
    transport: str,
    protocol_version: str,
    tracer_provider: trace.TracerProvider | None,
    record_content: bool | None,
) -> AsyncGenerator[AgentEvent, None]:
    call = AgentCall(
        transport=transport,
        protocol_version=protocol_version,
        conversation_id=request.context_id,
        user_id=request.user_id,
        input_text=request.text,
    )
    with invoke_agent_span(
        agent_name,
        call,
        tracer_provider=tracer_provider,
        record_content=record_content,
    ) as invocation:
        assert invocation.context is not None  # tracing is on: the span is real
        try:
            while True:
                token = otel_context.attach(invocation.context)
                try:
                    event = await anext(events)
                except StopAsyncIteration:
                    return
                finally:
                    otel_context.detach(token)
                invocation.observe(event)
                yield event
        finally:
            token = otel_context.attach(invocation.context)
            try:
                await close_events(events)  # e.g. the remote cancel, still inside the span
            finally:
                otel_context.detach(token)


async def _metered(
    events: AsyncIterator[AgentEvent], call: ClientCallMeter
) -> AsyncGenerator[AgentEvent, None]:
    try:
        async for event in events:
            call.observe(event)
            yield event
    finally:
        call.end()
        await close_events(events)
