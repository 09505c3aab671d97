"""The one way every front door runs an agent.

A door (A2A on JSON-RPC, REST and gRPC; AG-UI; any door added later) parses its protocol
into an :class:`~trpc_bridge.events.AgentRequest`, describes the call as a
:class:`IncomingCall` (:meth:`AgentRunner.caller_of` applies the one identity rule to the
principal the server's edge verified), and iterates
:meth:`AgentRunner.run`. The runner does the rest, the same way for every door:

- the caller's W3C trace context is attached and the SERVER ``invoke_agent`` span opened
  around the whole run (tracing off: the trace context is only forwarded);
- ``execute_tool`` spans follow the run's tool calls and results — unless the agent's
  tools run in another process (a remote agent: ``Agent.tools_run_elsewhere``), which
  records them itself;
- the agent's thinking and error text are masked by the redaction policy
  (:class:`~trpc_bridge.redaction.EventRedactor`) before any door or encoder sees them;
- an agent that raises ends the run with a ``run_error`` event that says only the
  exception's type (the text may hold secrets; it is logged here);
- a run that takes longer than ``run_timeout`` seconds (an agent that hangs) is cancelled
  and ends with a ``run_error`` event (code ``run_timeout``), the same on every door;
- the agent's iterator is closed when the run ends, is cancelled, or the door stops
  reading (a client disconnect).

Doors that keep runs as A2A tasks start them with :meth:`AgentRunner.start`, which
registers the run in :attr:`AgentRunner.tasks` where ``tasks/get``, ``tasks/cancel`` and
``tasks/resubscribe`` find it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field

from a2a.server.tasks import TaskStore
from opentelemetry.trace import SpanContext, TracerProvider
from pydantic import SecretStr

from trpc_bridge import redaction
from trpc_bridge.agent import (
    Agent,
    agent_failure_message,
    close_events,
    forwards_caller_token,
    meters_own_tokens,
    tools_run_elsewhere,
)
from trpc_bridge.codecs.encoding import StreamEncoding
from trpc_bridge.events import AgentEvent, AgentRequest, ErrorType
from trpc_bridge.redaction import EventRedactor
from trpc_bridge.server.auth.authenticator import AuthGate
from trpc_bridge.server.auth.principal import Principal
from trpc_bridge.server.auth.trusted_header import TrustedHeader
from trpc_bridge.server.identity import unscreened, without_credentials
from trpc_bridge.server.proxying.a2a_relay import a2a_relay_for
from trpc_bridge.server.proxying.relay import RunSource
from trpc_bridge.server.tasks.live_task import LiveTask, OnEnd
from trpc_bridge.server.tasks.memory_store import BoundedMemoryTaskStore
from trpc_bridge.server.tasks.registry import TaskRegistry
from trpc_bridge.telemetry.logs import note_run
from trpc_bridge.telemetry.metrics import BridgeMetrics
from trpc_bridge.telemetry.server_span import ServerSpans, forwarded_context
from trpc_bridge.telemetry.spans import AgentCall, tracing_enabled
from trpc_bridge.telemetry.tools import ToolSpans

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IncomingCall:
    """One incoming call, as every door describes it."""

    #: The resolved identity (:meth:`AgentRunner.caller_of`).
    user_id: str
    #: The door's binding: ``JSONRPC``, ``HTTP+JSON``, ``GRPC``, ``AG-UI``, …
    transport: str
    #: The A2A wire version, where the door has one (``0.3`` / ``1.0``).
    protocol_version: str = ""
    #: Request headers or gRPC metadata, lower-case names, without credentials (the
    #: trace context's carrier, the encoding's negotiation).
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Who the server verified the caller to be (:attr:`user_id` is its ``user_id``).
    principal: Principal | None = None


def caller_bearer(caller: IncomingCall) -> SecretStr | None:
    """The bearer token the server verified the caller by (``--auth oidc``), for an agent
    that forwards it; ``None`` for a caller identified otherwise (an API key, a client
    certificate, a trusted header): only a verified token is passed on."""
    principal = caller.principal
    return SecretStr(principal.token) if principal is not None and principal.token else None


#: ``error.code`` of the ``run_error`` that ends a run cancelled by the run timeout.
RUN_TIMEOUT_CODE = "run_timeout"


class _RunTimedOut(Exception):
    pass


async def _next_event(
    events: AsyncIterator[AgentEvent], deadline: float | None
) -> AgentEvent | None:
    """The agent's next event (None: it ended), awaited until ``deadline`` (loop time,
    for the whole run): past it the agent is cancelled and :class:`_RunTimedOut` raised.
    The deadline can only fire while the agent is awaited, never inside the consumer."""
    if deadline is None:  # no run timeout: no timeout scope per event (~3 µs each)
        try:
            return await anext(events)
        except StopAsyncIteration:
            return None
    window = asyncio.timeout_at(deadline)
    try:
        async with window:
            return await anext(events)
    except StopAsyncIteration:
        return None
    except TimeoutError:
        if window.expired():
            raise _RunTimedOut from None
        raise  # the agent's own TimeoutError: an agent failure


class AgentRunner:
    """Runs one agent for every door of a server (see the module doc)."""

    def __init__(
        self,
        agent: Agent,
        task_store: TaskStore | None = None,
        *,
        tracer_provider: TracerProvider | None = None,
        record_content: bool | None = None,
        run_timeout: float = 0.0,
        metrics: BridgeMetrics | None = None,
        gate: AuthGate | None = None,
    ) -> None:
        self.agent = agent
        #: The server's instruments; ``None``: metrics are off (nothing is measured).
        self.metrics = metrics
        #: The server's one authenticator (its edges run it); by default ``X-User-ID``
        #: taken on trust, the loopback rule.
        self.gate = gate or AuthGate(TrustedHeader())
        #: Seconds a run may take (waiting for the agent); 0 = no limit.
        self.run_timeout = run_timeout
        self.tasks = TaskRegistry(task_store or BoundedMemoryTaskStore())
        self._provider = tracer_provider
        self._spans = ServerSpans(agent.name, tracer_provider, record_content)
        self._forwards_token = forwards_caller_token(agent)

    def caller_of(
        self,
        principal: Principal | None,
        headers: Mapping[str, str],
        *,
        transport: str,
        protocol_version: str = "",
    ) -> IncomingCall:
        """The identity rule (``server/identity.py``): the caller is ``principal``, which
        the server's edge verified; a call no edge let in (None) is identified by the
        trusted header when this runner trusts it, and refused otherwise. ``headers``
        (lower-case names) are kept without their credentials. Raises
        :class:`~trpc_bridge.server.auth.errors.AuthError`."""
        if principal is None:
            principal = unscreened(self.gate, headers)
        return IncomingCall(
            user_id=principal.user_id,
            transport=transport,
            protocol_version=protocol_version,
            headers=without_credentials(headers),
            principal=principal,
        )

    async def run(
        self,
        request: AgentRequest,
        caller: IncomingCall,
        *,
        task_id: str = "",
        on_span: Callable[[SpanContext], object] | None = None,
        encoding: str = "",
        streamed: bool = True,
        source: RunSource | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        """The agent's events for ``request``; ends after a ``run_error`` event if the
        agent raises. Close it (``aclose``) or cancel its consumer to stop the agent.

        ``on_span`` is told the SERVER span once it is open (not at all with tracing
        off), for a door that names the run's trace to its caller. ``encoding`` names
        the wire encoding the door writes the events in (a metrics attribute);
        ``streamed`` says whether the caller gets them as they come (a unary A2A call
        does not: no time to first token is measured). ``source`` runs the agent instead of
        its ``run``: the events of what a relay does not take (``server/proxying``)."""
        call = AgentCall(
            transport=caller.transport,
            protocol_version=caller.protocol_version,
            conversation_id=request.context_id,
            task_id=task_id,
            user_id=caller.user_id,
            input_text=request.text,
        )
        with self._spans.serving(caller.headers, call) as span:
            span_context = span.get_span_context() if span is not None else None
            if span_context is not None and on_span is not None:
                on_span(span_context)
            # The request's log lines name the run's trace, task and transport.
            note_run(span_context, task_id=task_id, transport=caller.transport)
            meter = (
                self.metrics.run(
                    self.agent.name,
                    transport=caller.transport,
                    protocol_version=caller.protocol_version,
                    encoding=encoding,
                    streamed=streamed,
                    tokens=not meters_own_tokens(self.agent),
                    started=source.sent_at if source is not None else None,
                )
                if self.metrics is not None
                else None
            )
            tools = (
                ToolSpans(
                    tracer_provider=self._provider,
                    record_content=self._spans.record_content,  # resolved once
                    tools=not tools_run_elsewhere(self.agent),
                )
                if tracing_enabled(self._provider)
                else None
            )
            request = self._agent_request(request, caller)
            if source is None:
                events = self.agent.run(request)
            else:
                source.meter = meter
                events = source.events(request)
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.run_timeout if self.run_timeout > 0 else None
            redactor = EventRedactor(redaction.current())
            ended = False  # the run came to its end (not stopped by its consumer)
            try:
                while (event := await _next_event(events, deadline)) is not None:
                    for shown in redactor.events(event):
                        if tools is not None:
                            tools.observe(shown)
                        if meter is not None:
                            meter.observe(shown)
                        yield shown
                for shown in redactor.close():
                    if meter is not None:
                        meter.observe(shown)
                    yield shown
                ended = True
            except Exception as exc:  # the agent failed or overran: a terminal run_error
                if isinstance(exc, _RunTimedOut):
                    logger.warning(
                        "agent %s cancelled by the %g s run timeout",
                        self.agent.name,
                        self.run_timeout,
                    )
                    failure = AgentEvent.failure(
                        f"agent run exceeded the run timeout ({self.run_timeout:g} s)",
                        type=ErrorType.RUN,
                        code=RUN_TIMEOUT_CODE,
                    )
                else:
                    failure = AgentEvent.failure(
                        agent_failure_message(self.agent.name, exc), type=ErrorType.RUN
                    )
                for shown in redactor.close():
                    yield shown
                if tools is not None:
                    tools.observe(failure)
                if meter is not None:
                    meter.observe(failure)
                ended = True
                yield failure
            finally:
                if tools is not None:
                    tools.close()
                if meter is not None:
                    meter.end(cancelled=not ended)
                await close_events(events)

    def start(
        self,
        live: LiveTask,
        request: AgentRequest,
        caller: IncomingCall,
        encoder: StreamEncoding,
        on_end: OnEnd | None = None,
        *,
        encoding: str = "",
        streamed: bool = True,
        source: RunSource | None = None,
    ) -> None:
        """Run ``request`` in the background as the A2A task ``live``: registered where
        ``tasks/*`` find it, its frames published through ``encoder`` (the encoding
        named ``encoding``), or relayed from the agent's own when it streams what
        ``encoder`` writes (``server/proxying``). ``source``: the door's own relay of
        the run (a unary one), instead of the agent's ``run``."""
        self.tasks.add(live)
        relay = a2a_relay_for(self.agent, encoder, live) if source is None else None
        source = relay or source
        run = self.run(
            request,
            caller,
            task_id=live.task_id,
            encoding=encoding,
            streamed=streamed,
            source=source,
        )
        live.start(run, encoder if relay is None else relay.encoder, on_end)
        # Still before the run's first step: the producer task has not run yet.
        if source is not None and self._send_ahead(source, request, caller):
            live.when_done(source.drop_ahead)

    def _agent_request(self, request: AgentRequest, caller: IncomingCall) -> AgentRequest:
        """``request`` as the agent gets it: with the caller's token when it forwards it."""
        if self._forwards_token:
            return request.model_copy(update={"caller_token": caller_bearer(caller)})
        return request

    def _send_ahead(self, source: RunSource, request: AgentRequest, caller: IncomingCall) -> bool:
        """The run's upstream request sent now, before the run's first step
        (``server/proxying/ahead.py``), when no span observes the run: its SERVER span
        starts in :meth:`run` (its meter starts from the send). The caller's trace
        context goes on, as :meth:`run` forwards it with tracing off."""
        if tracing_enabled(self._provider):
            return False
        with forwarded_context(caller.headers):
            return source.send_ahead(self._agent_request(request, caller))
