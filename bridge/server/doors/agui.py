"""``POST /agui``: the AG-UI 1.0 door to any agent, through the agent runner.

The body is an AG-UI ``RunAgentInput``, read as strict JSON like every door's
(:mod:`~trpc_bridge.json_body`); HTTP 400 with a JSON error when it is not one, when it
holds no user message (the agent would be asked nothing), or when its ``threadId`` or
``runId`` is longer than the ids A2A takes (255 characters, as for a ``contextId``);
its last user message becomes the :class:`~trpc_bridge.events.AgentRequest` (``threadId``
→ context id, ``runId`` → invocation id). The caller's identity and trace context are
resolved by the runner exactly as for A2A (the principal the HTTP edge verified, the
``traceparent``), and the run
gets its own SERVER ``invoke_agent`` span with its ``execute_tool`` spans. The answer is a
Server-Sent Events stream written by ``ag_ui.encoder.EventEncoder`` from
:class:`~trpc_bridge.codecs.agui.translator.AguiTranslator`.

With tracing on, the stream also names the run's trace: a ``CUSTOM`` event
``traceparent`` whose value is the W3C ``traceparent`` of the run's SERVER span, sent
with the run's first translated event (the span opens when the run starts, after the
response headers have gone, so a header cannot carry it). A client that started no trace
of its own, such as the playground page, learns which trace to look for; without tracing
there is no such event.

The run is translated by a task of its own into an :class:`Outbox` the response writes
from: everything translated by the time the writer is ready goes out in one write, and
the run waits while the client is :data:`BEHIND` events behind. When the client goes away
the response task is cancelled (Starlette does this for ASGI servers such as uvicorn),
that task with it, and the runner closes the agent's iterator so its work stops.

In front of an upstream that streams trpc's text deltas (``trpc-bridge proxy``), most of
them are relayed to the outbox without becoming events (``server/proxying/agui_relay``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Sequence

from ag_ui.core import BaseEvent, CustomEvent, RunAgentInput, UserMessage
from ag_ui.encoder import EventEncoder
from opentelemetry.trace import SpanContext
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from trpc_bridge.codecs.agui.request import request_from_run_input
from trpc_bridge.codecs.agui.translator import AguiTranslator
from trpc_bridge.events import AgentEvent
from trpc_bridge.json_body import BodyError, read_json
from trpc_bridge.names import ID_LENGTH, TRANSPORT_AGUI
from trpc_bridge.server.auth.answers import answer
from trpc_bridge.server.auth.errors import AuthError
from trpc_bridge.server.background import cancel_and_wait
from trpc_bridge.server.identity import http_principal, lower_headers
from trpc_bridge.server.proxying.agui_relay import AguiRelay, agui_relay_for
from trpc_bridge.server.runner import AgentRunner

DEFAULT_PATH = "/agui"


def agui_routes(runner: AgentRunner, *, path: str = DEFAULT_PATH) -> list[BaseRoute]:
    """The Starlette route serving ``runner``'s agent as AG-UI at ``path``."""

    async def run(request: Request) -> Response:
        try:
            run_input = RunAgentInput.model_validate(read_json(await request.body()))
        except BodyError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except ValidationError as exc:
            detail = exc.errors(include_url=False, include_input=False, include_context=False)
            return JSONResponse(
                {"error": "invalid RunAgentInput", "detail": detail}, status_code=400
            )
        refused = run_input_refusal(run_input)
        if refused:
            return JSONResponse({"error": refused}, status_code=400)
        try:
            caller = runner.caller_of(
                http_principal(request.scope),
                lower_headers(request.headers.items()),
                transport=TRANSPORT_AGUI,
            )
        except AuthError as exc:
            return JSONResponse({"error": exc.message}, status_code=answer(exc).http_status)
        agent_request = request_from_run_input(run_input, user_id=caller.user_id)
        encoder = EventEncoder(accept=request.headers.get("accept", ""))
        translator = AguiTranslator(
            run_input.thread_id,
            run_input.run_id,
            state_keys=run_input.state if isinstance(run_input.state, dict) else (),
        )
        spans: list[SpanContext] = []
        outbox = Outbox()
        relay = agui_relay_for(runner.agent, outbox.put, outbox.room)
        events = runner.run(
            agent_request, caller, on_span=spans.append, encoding="agui", source=relay
        )
        run = _Run(translator, encoder, spans, outbox, relay)
        return StreamingResponse(
            run.sse(events),
            media_type=encoder.get_content_type(),
            # Proxies must pass each event on as it comes.
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    return [Route(path, run, methods=["POST"])]


def run_input_refusal(run_input: RunAgentInput) -> str:
    """Why a valid ``RunAgentInput`` cannot be run (empty: it can)."""
    for name, value in (("threadId", run_input.thread_id), ("runId", run_input.run_id)):
        if len(value) > ID_LENGTH:
            return f"{name} is longer than {ID_LENGTH} characters"
    if not any(isinstance(m, UserMessage) for m in run_input.messages):
        return "messages hold no user message: the agent would be asked nothing"
    return ""


#: ``name`` of the CUSTOM event that carries the run's W3C ``traceparent``.
TRACE_EVENT = "traceparent"


def traceparent(span: SpanContext) -> str:
    return f"00-{span.trace_id:032x}-{span.span_id:016x}-{span.trace_flags:02x}"


def _trace_event(spans: list[SpanContext]) -> list[BaseEvent]:
    """The CUSTOM trace event once the span has opened; then never again."""
    return [CustomEvent(name=TRACE_EVENT, value=traceparent(spans.pop()))] if spans else []


#: SSE events a client may be behind before the run waits for it.
BEHIND = 512


class Outbox:
    """SSE events of one run, written by its response as they come, all at once."""

    def __init__(self) -> None:
        self._events: list[str] = []
        self._ready = asyncio.Event()
        self._drained = asyncio.Event()
        self._closed = False

    def put(self, event: str) -> None:
        self._events.append(event)
        self._ready.set()

    def extend(self, events: Iterable[str]) -> None:
        self._events.extend(events)
        self._ready.set()

    def close(self) -> None:
        self._closed = True
        self._ready.set()

    async def room(self) -> None:
        """Until the client is fewer than :data:`BEHIND` events behind."""
        while len(self._events) >= BEHIND and not self._closed:
            self._drained.clear()
            await self._drained.wait()

    async def batch(self) -> str | None:
        """Every event put so far, joined (at least one); None once closed and empty."""
        while not self._events:
            if self._closed:
                return None
            self._ready.clear()
            await self._ready.wait()
        events, self._events = self._events, []
        self._drained.set()
        return "".join(events)


class _Run:
    """One AG-UI run: its events translated into the outbox (:meth:`produce`) while the
    response writes from it (:meth:`sse`). ``spans`` receives the run's SERVER span when it
    opens (see the module doc)."""

    def __init__(
        self,
        translator: AguiTranslator,
        encoder: EventEncoder,
        spans: list[SpanContext],
        outbox: Outbox,
        relay: AguiRelay | None,
    ) -> None:
        self.translator = translator
        self.encoder = encoder
        self.spans = spans
        self.outbox = outbox
        self.relay = relay

    async def sse(self, events: AsyncGenerator[AgentEvent, None]) -> AsyncIterator[str]:
        producer = asyncio.ensure_future(self.produce(events))
        try:
            while (written := await self.outbox.batch()) is not None:
                yield written
            await producer  # its failure, if it failed
        finally:
            if not producer.done():  # the client went away: the run stops
                await cancel_and_wait(producer)

    def _write(self, out: Sequence[BaseEvent]) -> None:
        written = [self.encoder.encode(event) for event in out]
        relay = self.relay
        if relay is not None and relay.recorded is not None:
            relay.recorded.extend(written)  # what the relay learns a delta's output from
        self.outbox.extend(written)

    async def produce(self, events: AsyncGenerator[AgentEvent, None]) -> None:
        translator, spans = self.translator, self.spans
        tail: Sequence[BaseEvent]
        try:
            try:
                self._write(translator.start())
                async for event in events:
                    self._write([*_trace_event(spans), *translator.translate(event)])
                    if translator.ended:
                        break
                    await self.outbox.room()
                tail = [*_trace_event(spans), *translator.finish()]  # (a run without events)
            finally:
                # Also on cancellation (client disconnect): the runner stops the agent.
                await events.aclose()
            self._write(tail)
        finally:
            self.outbox.close()
