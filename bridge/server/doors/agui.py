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

When the client goes away the response task is cancelled (Starlette does this for ASGI
servers such as uvicorn), and the runner closes the agent's iterator so its work stops.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence

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
from trpc_bridge.names import TRANSPORT_AGUI
from trpc_bridge.server.auth.answers import answer
from trpc_bridge.server.auth.errors import AuthError
from trpc_bridge.server.identity import http_principal, lower_headers
from trpc_bridge.server.runner import AgentRunner
from trpc_bridge.server.tasks.store import ID_LENGTH

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
        events = runner.run(agent_request, caller, on_span=spans.append, encoding="agui")
        return StreamingResponse(
            _sse(translator, events, encoder, spans),
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


async def _sse(
    translator: AguiTranslator,
    events: AsyncGenerator[AgentEvent, None],
    encoder: EventEncoder,
    spans: list[SpanContext],
) -> AsyncIterator[str]:
    """``spans`` receives the run's SERVER span when it opens (see the module doc)."""
    tail: Sequence[BaseEvent]
    try:
        for out in translator.start():
            yield encoder.encode(out)
        async for event in events:
            for out in [*_trace_event(spans), *translator.translate(event)]:
                yield encoder.encode(out)
            if translator.ended:
                break
        tail = [*_trace_event(spans), *translator.finish()]  # (a run without events)
    finally:
        # Also on cancellation (client disconnect): the runner stops the agent.
        await events.aclose()
    for out in tail:
        yield encoder.encode(out)
