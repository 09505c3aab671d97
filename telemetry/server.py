"""Tracing for plain a2a-sdk servers: one ``invoke_agent`` SERVER span per A2A message
call, on HTTP (JSON-RPC and REST, as ASGI middleware) and on gRPC (as a ``grpc.aio``
server interceptor), with the span policy of :mod:`trpc_bridge.telemetry.server_span`.
The bridge's own server does not need these: its agent runner opens the span.

Only message calls (``message/send``, ``message/stream``, ``SendMessage``,
``SendStreamingMessage`` and the REST ``/message:send|stream`` routes) are traced, like
trpc-agent-go, whose middleware wraps the JSON-RPC endpoint and not the card. The span
is the current span while the handler runs; a2a-sdk runs the executor in a task that
copies the request's contextvars, so the agent's own spans become its children.

With tracing off no span is opened, but an incoming trace context is still forwarded
(see :func:`~trpc_bridge.telemetry.server_span.forwarded_context`); without trace
headers, off costs one scan of the header list.
"""

from __future__ import annotations

import inspect
import json
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

import grpc
from opentelemetry import trace
from opentelemetry.semconv.attributes import http_attributes
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from trpc_bridge.grpc_wrap import HandlerInterceptor, wrapped
from trpc_bridge.names import TRANSPORT_GRPC, TRANSPORT_JSONRPC, TRANSPORT_REST, USER_ID_KEY
from trpc_bridge.telemetry.server_span import (
    PROPAGATED,
    ServerSpans,
    forwarded_context,
)
from trpc_bridge.telemetry.spans import AgentCall, tracing_enabled

JSONRPC_MESSAGE_METHODS = frozenset(
    {"message/send", "message/stream", "SendMessage", "SendStreamingMessage"}
)
REST_MESSAGE_SUFFIXES = ("/message:send", "/message:stream")
GRPC_MESSAGE_METHODS = frozenset({"SendMessage", "SendStreamingMessage"})
#: The 0.3 gRPC service; the 1.0 one is ``lf.a2a.v1.A2AService``.
GRPC_SERVICE_V03 = "a2a.v1.A2AService"

_A2A_VERSION_HEADER = "a2a-version"
#: a2a-sdk serves 0.3 when the ``A2A-Version`` header is missing or empty.
_DEFAULT_HTTP_VERSION = "0.3"


class TraceContextMiddleware:
    """Pure ASGI middleware: one SERVER span per A2A message call over JSON-RPC or REST.

    Wrapping at the ASGI level (not per response chunk) gives a streaming call one span
    that ends when the last SSE event has been sent. JSON-RPC method names live in the
    body, so the body of a POST is read before the app sees it and then replayed; that
    happens only with tracing on.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        agent_name: str,
        tracer_provider: trace.TracerProvider | None = None,
        record_content: bool | None = None,
        user_id_header: str = USER_ID_KEY,
    ) -> None:
        self.app = app
        self._spans = ServerSpans(agent_name, tracer_provider, record_content, user_id_header)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        headers = _selected_headers(scope, self._spans.user_id_header)
        if not tracing_enabled(self._spans.provider):
            with forwarded_context(headers):
                await self.app(scope, receive, send)
            return
        body, received = await _read_body(receive)
        replay = _replaying(received, receive)
        call = _http_message_call(scope["path"], body, headers, self._spans)
        if call is None:
            await self.app(scope, replay, send)
            return
        with self._spans.span(headers, call) as span:

            async def send_observed(message: Message) -> None:
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                    span.set_attribute(http_attributes.HTTP_RESPONSE_STATUS_CODE, status)
                    if status >= 500:
                        span.set_status(trace.StatusCode.ERROR)
                await send(message)

            await self.app(scope, replay, send_observed)


async def _read_body(receive: Receive) -> tuple[bytes, list[Message]]:
    received: list[Message] = []
    chunks: list[bytes] = []
    while True:
        message = await receive()
        received.append(message)
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks), received


def _replaying(received: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that hands out the already-read messages, then the live ones (the
    app must still see ``http.disconnect`` to stop a stream)."""
    pending = deque(received)

    async def replay() -> Message:
        return pending.popleft() if pending else await receive()

    return replay


_WANTED_HEADERS = frozenset({"traceparent", "tracestate", "baggage", _A2A_VERSION_HEADER})


def _selected_headers(scope: Scope, user_id_header: str) -> dict[str, str]:
    """The few request headers the span needs (ASGI names are already lower-case)."""
    selected: dict[str, str] = {}
    for raw_name, raw_value in scope["headers"]:
        name = raw_name.decode("latin-1")
        if name in _WANTED_HEADERS or name == user_id_header:
            selected[name] = raw_value.decode("latin-1")
    return selected


def _http_message_call(
    path: str, body: bytes, headers: Mapping[str, str], spans: ServerSpans
) -> AgentCall | None:
    """The call's description if this POST is an A2A message call, else ``None``."""
    try:
        payload = json.loads(body) if body else None
    except ValueError:
        payload = None
    if path.endswith(REST_MESSAGE_SUFFIXES):
        transport = TRANSPORT_REST
        message = payload.get("message") if isinstance(payload, dict) else None
    elif isinstance(payload, dict) and payload.get("method") in JSONRPC_MESSAGE_METHODS:
        transport = TRANSPORT_JSONRPC
        params = payload.get("params")
        message = params.get("message") if isinstance(params, dict) else None
    else:
        return None
    if not isinstance(message, dict):
        message = {}
    text = ""
    if spans.record_content:
        parts = message.get("parts")
        text = "".join(
            part["text"]
            for part in parts or ()
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return AgentCall(
        transport=transport,
        protocol_version=headers.get(_A2A_VERSION_HEADER) or _DEFAULT_HTTP_VERSION,
        conversation_id=_text(message.get("contextId")),
        task_id=_text(message.get("taskId")),
        user_id=headers.get(spans.user_id_header, ""),
        input_text=text,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


_Unary = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]
_Streaming = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[Any]]
#: Opens what a gRPC message call runs inside: its SERVER span, or just the forwarded context.
_CallScope = Callable[[Any], AbstractContextManager[Any]]


class TraceContextServerInterceptor(HandlerInterceptor):
    """gRPC counterpart of :class:`TraceContextMiddleware`: reads ``traceparent`` /
    ``tracestate`` / ``baggage`` from the invocation metadata of ``SendMessage`` and
    ``SendStreamingMessage`` (A2A 1.0 and 0.3 services) and opens the SERVER span."""

    def __init__(
        self,
        *,
        agent_name: str,
        tracer_provider: trace.TracerProvider | None = None,
        record_content: bool | None = None,
        user_id_header: str = USER_ID_KEY,
    ) -> None:
        self._spans = ServerSpans(agent_name, tracer_provider, record_content, user_id_header)

    def wrap(
        self, handler: grpc.RpcMethodHandler, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler:
        service, _, method = details.method.rpartition("/")
        if method not in GRPC_MESSAGE_METHODS:
            return handler
        metadata = {
            key: value for key, value in details.invocation_metadata or () if isinstance(value, str)
        }
        version = "0.3" if service.lstrip("/") == GRPC_SERVICE_V03 else "1.0"
        scope: _CallScope
        if tracing_enabled(self._spans.provider):

            def scope(request: Any) -> AbstractContextManager[Any]:
                return self._spans.span(metadata, self._grpc_call(request, metadata, version))

        elif PROPAGATED.intersection(metadata):

            def scope(request: Any) -> AbstractContextManager[Any]:
                return forwarded_context(metadata)

        else:
            return handler
        return wrapped(
            handler,
            unary=lambda behavior: self._traced_unary(behavior, scope),
            stream=lambda behavior: self._traced_stream(behavior, scope),
        )

    @staticmethod
    def _traced_unary(inner: _Unary, scope: _CallScope) -> _Unary:
        async def behavior(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            with scope(request):
                return await inner(request, context)

        return behavior

    @staticmethod
    def _traced_stream(inner: _Streaming, scope: _CallScope) -> Any:
        if inspect.isasyncgenfunction(inner):

            async def streaming(
                request: Any, context: grpc.aio.ServicerContext[Any, Any]
            ) -> AsyncIterator[Any]:
                with scope(request):
                    async for response in inner(request, context):
                        yield response

            return streaming

        # A handler that writes with ``context.write`` and returns a coroutine.
        async def writing(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            with scope(request):
                return await inner(request, context)  # type: ignore[misc]

        return writing

    def _grpc_call(self, request: Any, metadata: Mapping[str, str], version: str) -> AgentCall:
        # 1.0 ``SendMessageRequest.message``; 0.3 ``SendMessageRequest.request``.
        field = "message" if version == "1.0" else "request"
        message = getattr(request, field, None)
        text = ""
        if self._spans.record_content and message is not None:
            # ``text`` is a plain string field of ``Part`` in both versions ("" if unset).
            text = "".join(part.text for part in message.parts)
        return AgentCall(
            transport=TRANSPORT_GRPC,
            protocol_version=version,
            conversation_id=getattr(message, "context_id", "") or "",
            task_id=getattr(message, "task_id", "") or "",
            user_id=metadata.get(self._spans.user_id_header, ""),
            input_text=text,
        )
