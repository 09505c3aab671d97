"""The ACP door: one ACP connection's client → agent calls, answered by any
:class:`~trpc_bridge.agent.Agent` through E2A.

Every ``session/prompt`` is carried the whole way by the E2A codec: the JSON-RPC params
become an :class:`E2AEnvelope` (``envelope_from_acp_jsonrpc``), the envelope the agent's
request; the agent's events become E2A records (``E2AEventEncoder``: sequence from 0, one
final record), written to the wire log when there is one, and each record's ACP
projection goes to the client: ``session/update`` notifications (``agent_message_chunk``,
``agent_thought_chunk``, ``tool_call`` / ``tool_call_update``) while the run streams, the
answer to the prompt (``stopReason``, or a JSON-RPC error) from the final record.

The agent runs through the server's one :class:`~trpc_bridge.server.runner.AgentRunner`,
as behind every other door: identity (``--user``, the one ``X-User-ID`` rule), the SERVER
``invoke_agent`` span under the trace context an ACP client puts in ``_meta``
(``traceparent`` / ``tracestate`` / ``baggage``), tool spans, an agent exception as a
``run_error`` that names only its type, the agent's iterator closed however the run ends.

Sessions are A2A contexts: the ACP session id is the request's context id, so a remote
trpc-agent-go agent keeps its conversation per ACP session. ``session/cancel`` stops the
run: the runner closes the agent's iterator (a :class:`RemoteAgent` then cancels its
remote task) and the prompt is answered ``stopReason: cancelled``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, schema

from trpc_bridge import __version__
from trpc_bridge.agent import closing_events
from trpc_bridge.codecs.e2a import (
    E2AError,
    E2AEventEncoder,
    E2AResponse,
    ResponseSequencer,
    e2a_response_to_acp_jsonrpc_response,
    e2a_response_to_acp_notification,
    envelope_from_acp_jsonrpc,
    envelope_to_agent_request,
)
from trpc_bridge.codecs.e2a.acp_schema import to_json, validated
from trpc_bridge.events import AgentRequest
from trpc_bridge.names import TRANSPORT_ACP, new_id, shown_id
from trpc_bridge.server.auth.trusted_header import header_principal
from trpc_bridge.server.doors.acp.jsonrpc_lines import RequestId
from trpc_bridge.server.doors.acp.wire_log import E2AWireLog
from trpc_bridge.server.runner import AgentRunner, IncomingCall

log = logging.getLogger(__name__)

Notify = Callable[[str, Any], Awaitable[None]]

#: ``IncomingCall.transport`` of this door.
#: ``_meta`` keys that carry the W3C trace context (ACP's extensibility convention).
_TRACE_KEYS = ("traceparent", "tracestate", "baggage")


@dataclass
class _Session:
    id: str
    cwd: str
    running: asyncio.Task[bool] | None = None


class AcpDoor:
    """Answers the calls of one ACP client. ``notify`` sends a notification to it."""

    def __init__(
        self,
        runner: AgentRunner,
        notify: Notify,
        *,
        user_id: str,
        wire_log: E2AWireLog | None = None,
    ) -> None:
        self._runner = runner
        self._notify = notify
        self._user_id = user_id
        self._wire_log = wire_log
        self._sessions: dict[str, _Session] = {}

    async def handle(
        self, method: str, params: Any, request_id: RequestId, is_notification: bool
    ) -> Any:
        """The connection's handler (``jsonrpc_lines.Handler``). Bad params are answered
        ``-32602`` with what is wrong."""
        if params is not None and not isinstance(params, dict):
            raise RequestError.invalid_params({"details": "params must be an object"})
        try:
            return await self._dispatch(method, params or {}, request_id, is_notification)
        except E2AError as exc:
            raise RequestError.invalid_params({"details": str(exc)}) from None

    async def _dispatch(
        self, method: str, params: dict[str, Any], request_id: RequestId, is_notification: bool
    ) -> Any:
        if method == "initialize":
            return self._initialize(params)
        if method == "authenticate":
            return {}
        if method == "session/new":
            return self._new_session(params)
        if method == "session/prompt":
            return await self._prompt(params, request_id)
        if method == "session/cancel":
            self._cancel(params)
            return None
        if is_notification:
            return None  # unknown notifications are ignored, as JSON-RPC wants
        raise RequestError.method_not_found(shown_id(method))

    def _initialize(self, params: dict[str, Any]) -> Any:
        validated(schema.InitializeRequest, params, "ACP initialize params")
        answer = schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                load_session=False,
                prompt_capabilities=schema.PromptCapabilities(
                    image=True, audio=True, embedded_context=True
                ),
            ),
            agent_info=schema.Implementation(
                name="trpc-bridge", title=self._runner.agent.name, version=__version__
            ),
            auth_methods=[],
        )
        return to_json(answer)

    def _new_session(self, params: dict[str, Any]) -> Any:
        request = validated(schema.NewSessionRequest, params, "ACP session/new params")
        assert isinstance(request, schema.NewSessionRequest)
        session = _Session(id=new_id("acp"), cwd=request.cwd)
        self._sessions[session.id] = session
        return to_json(schema.NewSessionResponse(session_id=session.id))

    def _cancel(self, params: dict[str, Any]) -> None:
        session = self._sessions.get(str(params.get("sessionId")))
        if session is not None and session.running is not None:
            session.running.cancel()

    async def _prompt(self, params: dict[str, Any], request_id: RequestId) -> Any:
        # With the request's id: every E2A record of the prompt echoes it (jsonrpc_id).
        call = {"jsonrpc": "2.0", "id": request_id, "method": "session/prompt", "params": params}
        envelope = envelope_from_acp_jsonrpc(call, user_id=self._user_id)
        request = envelope_to_agent_request(envelope)
        session = self._sessions.get(envelope.session_id or "")
        if session is None:
            raise RequestError.invalid_params({"details": "unknown sessionId"})
        if session.running is not None:
            raise RequestError.invalid_request({"details": "a prompt is already running"})
        # stdio: the caller is the local user who started the process (``--user``).
        principal = header_principal(self._user_id)
        caller = self._runner.caller_of(
            principal, self._headers(envelope.acp_meta), transport=TRANSPORT_ACP
        )
        encoder = E2AEventEncoder(ResponseSequencer(envelope))
        finals: list[E2AResponse] = []
        session.running = asyncio.create_task(self._pump(request, caller, encoder, finals))
        try:
            completed = await _outcome(session.running)
        finally:
            session.running = None
        if not completed:
            for record in encoder.cancel():
                await self._emit(record, finals)
        answer = e2a_response_to_acp_jsonrpc_response(finals[-1])
        if answer is None or "error" in answer:
            error = (answer or {}).get("error") or {"code": -32603, "message": "no answer"}
            raise RequestError(error["code"], error["message"], error.get("data"))
        return answer["result"]

    def _headers(self, meta: Mapping[str, Any]) -> dict[str, str]:
        """The client's trace context, as the runner reads it."""
        return {k: v for k in _TRACE_KEYS if isinstance(v := meta.get(k), str)}

    async def _pump(
        self,
        request: AgentRequest,
        caller: IncomingCall,
        encoder: E2AEventEncoder,
        finals: list[E2AResponse],
    ) -> bool:
        """Runs the agent, sending each record as it comes, the final one included. A
        cancel (``session/cancel``) leaves the ``async with``, which closes the run."""
        async with closing_events(self._runner.run(request, caller, encoding="acp")) as events:
            async for event in events:
                for record in encoder.encode(event):
                    await self._emit(record, finals)
                if encoder.finished:
                    break
        for record in encoder.close():
            await self._emit(record, finals)
        return True

    async def _emit(self, record: E2AResponse, finals: list[E2AResponse]) -> None:
        if record.is_final:
            finals.append(record)
        if self._wire_log is not None:
            self._wire_log.write(record)
        notification = e2a_response_to_acp_notification(record)
        if notification is not None:
            await self._notify(notification["method"], notification["params"])


async def _outcome(run: asyncio.Task[bool]) -> bool:
    """``False`` when ``run`` was cancelled (``session/cancel``); a cancellation of the
    caller itself (the connection closing) goes on up."""
    try:
        return await run
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
        return False
