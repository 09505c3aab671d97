"""The bridge's own route for A2A 0.3 ``message/stream`` and ``message/send`` (what
trpc-agent-go's clients send).

a2a-sdk's JSON-RPC dispatcher serves these by converting every frame (and every unary
result) into its pydantic 0.3 models and dumping those: most of a 0.3 stream's cost per
event. This route takes the requests it is sure about and writes the same bytes itself
(:mod:`trpc_bridge.codecs.a2a03_json`): streams through the same ``EventSourceResponse``
(same headers, pings, disconnect handling), unary results through the same
``JSONResponse``, errors as the SDK's 0.3 adapter writes them. Everything else — other
methods, the 1.0 wire, an ``A2A-Version`` other than 0.3, anything the SDK would reject
before running the agent — goes to the SDK's dispatcher unchanged.

Per request the SDK's own pieces still do the work that is not per event: the 0.3
request model validates the body, ``to_core_send_message_request`` converts it, the
SDK's context builders build the call context.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as types_v03
from a2a.compat.v0_3.context_builders import V03ServerCallContextBuilder
from a2a.compat.v0_3.jsonrpc_adapter import _to_v03_jsonrpc_error
from a2a.server.context import ServerCallContext
from a2a.server.jsonrpc_models import InternalError
from a2a.server.routes.common import DefaultServerCallContextBuilder, create_event_source_response
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import SendMessageRequest
from a2a.utils import constants
from a2a.utils.errors import A2AError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from trpc_bridge.codecs.a2a03_json import JsonRpcId, StreamWriter, result_to_json
from trpc_bridge.server.handler import TEXT_DELTAS, BridgeRequestHandler

logger = logging.getLogger(__name__)

STREAM = "message/stream"
SEND = "message/send"
_MODELS: dict[str, Any] = {
    STREAM: types_v03.SendStreamingMessageRequest,
    SEND: types_v03.SendMessageRequest,
}
_ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})


def _ours(body: Any, request: Request) -> bool:
    """A well-formed 0.3 request for one of our methods, which the SDK would run."""
    if not isinstance(body, dict) or not set(body) <= _ENVELOPE_KEYS:
        return False
    request_id = body.get("id")
    version = request.headers.get(constants.VERSION_HEADER, "")
    return (
        body.get("jsonrpc") == "2.0"
        and body.get("method") in _MODELS
        and isinstance(body.get("params"), dict)
        and isinstance(request_id, str | int)
        and not isinstance(request_id, bool)
        and version in ("", constants.PROTOCOL_VERSION_0_3)
    )


def _sse(data: bytes) -> bytes:
    # What sse-starlette writes for {"data": json}: the JSON has no line breaks.
    return b"data: " + data + b"\r\n\r\n"


def _rpc_error(error: Exception) -> Any:
    """The 0.3 JSON-RPC error the SDK's adapter maps ``error`` to."""
    if isinstance(error, A2AError):
        return _to_v03_jsonrpc_error(error)
    logger.exception("Unhandled exception in the 0.3 JSON-RPC route", exc_info=error)
    return None


def _error_frame(request_id: JsonRpcId, error: Exception) -> bytes:
    """The frame the SDK's adapter writes when a stream raises."""
    rpc_error = _rpc_error(error) or types_v03.InternalError(message=str(error))
    response = types_v03.SendStreamingMessageResponse(
        root=types_v03.JSONRPCErrorResponse(id=request_id, error=rpc_error)
    )
    return _sse(response.model_dump_json(by_alias=True, exclude_none=True).encode())


def _error_response(request_id: JsonRpcId, error: Exception) -> JSONResponse:
    """The response the SDK's adapter writes when ``message/send`` raises."""
    rpc_error = _rpc_error(error) or InternalError(message=str(error))
    return JSONResponse(
        {"jsonrpc": "2.0", "id": request_id, "error": rpc_error.model_dump(by_alias=True)}
    )


class Jsonrpc03Route:
    """The JSON-RPC endpoint: our 0.3 ``message/stream`` / ``message/send``, the SDK's
    dispatcher for the rest."""

    def __init__(self, handler: BridgeRequestHandler) -> None:
        self.handler = handler
        self.sdk = JsonRpcDispatcher(request_handler=handler, enable_v0_3_compat=True)
        self._contexts = V03ServerCallContextBuilder(DefaultServerCallContextBuilder())

    def route(self, path: str) -> Route:
        return Route(path=path, endpoint=self.handle, methods=["POST"])

    async def handle(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())  # cached: the SDK may read it again
        except ValueError:
            body = None
        if not _ours(body, request):
            return await self.sdk.handle_requests(request)
        method = body["method"]
        try:
            compat = _MODELS[method].model_validate(body)
            core = conversions.to_core_send_message_request(compat)
        except Exception:  # the SDK answers these with its own error response
            return await self.sdk.handle_requests(request)
        context = self._contexts.build(request)
        context.tenant = getattr(compat.params, "tenant", "")
        context.state["method"] = method
        context.state["request_id"] = compat.id
        if method == STREAM:
            return create_event_source_response(self._frames(core, context, compat.id))
        return await self._send(core, context, compat.id)

    async def _send(
        self, core: SendMessageRequest, context: ServerCallContext, request_id: JsonRpcId
    ) -> JSONResponse:
        try:
            result = await self.handler.on_message_send(core, context)
        except Exception as error:
            return _error_response(request_id, error)
        # JSONResponse renders as the SDK's does (json.dumps, compact, UTF-8).
        return JSONResponse({"id": request_id, "jsonrpc": "2.0", "result": result_to_json(result)})

    async def _frames(
        self, core: SendMessageRequest, context: ServerCallContext, request_id: JsonRpcId
    ) -> AsyncIterator[bytes]:
        context.state[TEXT_DELTAS] = True  # StreamWriter writes them straight to JSON
        writer = StreamWriter(request_id)
        batches = self.handler.stream_batches(core, context)
        try:
            async with contextlib.aclosing(batches):
                async for batch in batches:
                    # One write per batch; the bytes are those of one frame after another.
                    yield b"".join([_sse(writer.response(f)) for f in batch])
        except Exception as error:  # as the SDK's adapter: one error frame ends the stream
            yield _error_frame(request_id, error)
