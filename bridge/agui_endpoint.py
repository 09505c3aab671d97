"""``POST /agui``: any :class:`~trpc_bridge.agent.Agent` as an AG-UI 1.0 endpoint.

The body is an AG-UI ``RunAgentInput`` (HTTP 400 with a JSON error when it is not one);
its last user message becomes the :class:`~trpc_bridge.events.AgentRequest` (``threadId``
→ context id, ``runId`` → invocation id, the ``X-User-ID`` header → user id). The answer
is a Server-Sent Events stream written by ``ag_ui.encoder.EventEncoder`` from
:class:`~trpc_bridge.codecs.agui.AguiTranslator`.

When the client goes away the response task is cancelled (Starlette does this for ASGI
servers such as uvicorn), and the agent's iterator is closed so its work stops.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from ag_ui.core import BaseEvent, RunAgentInput
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from trpc_bridge.agent import Agent, agent_failure_message, close_events
from trpc_bridge.codecs.agui import AguiTranslator, request_from_run_input
from trpc_bridge.events import AgentEvent

DEFAULT_PATH = "/agui"
USER_ID_HEADER = "X-User-ID"


def agui_routes(
    agent: Agent, *, path: str = DEFAULT_PATH, user_id_header: str = USER_ID_HEADER
) -> list[BaseRoute]:
    """The Starlette route serving ``agent`` as AG-UI at ``path``."""

    async def run(request: Request) -> Response:
        try:
            run_input = RunAgentInput.model_validate_json(await request.body())
        except ValidationError as exc:
            detail = exc.errors(include_url=False, include_input=False, include_context=False)
            return JSONResponse(
                {"error": "invalid RunAgentInput", "detail": detail}, status_code=400
            )
        agent_request = request_from_run_input(
            run_input, user_id=request.headers.get(user_id_header, "")
        )
        encoder = EventEncoder(accept=request.headers.get("accept", ""))
        translator = AguiTranslator(
            run_input.thread_id,
            run_input.run_id,
            state_keys=run_input.state if isinstance(run_input.state, dict) else (),
        )
        return StreamingResponse(
            _sse(agent.name, translator, agent.run(agent_request), encoder),
            media_type=encoder.get_content_type(),
            # Proxies must pass each event on as it comes.
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    return [Route(path, run, methods=["POST"])]


async def _sse(
    agent_name: str,
    translator: AguiTranslator,
    events: AsyncIterator[AgentEvent],
    encoder: EventEncoder,
) -> AsyncIterator[str]:
    try:
        for out in translator.start():
            yield encoder.encode(out)
        async for event in events:
            for out in translator.translate(event):
                yield encoder.encode(out)
            if translator.ended:
                break
        tail: Sequence[BaseEvent] = translator.finish()
    except Exception as exc:  # the agent failed: the run ends with RUN_ERROR, not a cut stream
        tail = translator.fail(agent_failure_message(agent_name, exc), type(exc).__name__)
    finally:
        # Also on cancellation (client disconnect): stop the agent's work.
        await close_events(events)
    for out in tail:
        yield encoder.encode(out)
