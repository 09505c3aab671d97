"""The bridge's own answers to A2A 0.3 ``message/stream`` and ``message/send`` (what
trpc-agent-go's clients send), behind the JSON-RPC endpoint's parse
(:mod:`~trpc_bridge.server.a2a.jsonrpc_route`).

a2a-sdk's JSON-RPC dispatcher serves these by converting every frame (and every unary
result) into its pydantic 0.3 models and dumping those: most of a 0.3 stream's cost per
event. Here the same bytes are written directly (:mod:`trpc_bridge.codecs.a2a.json03`):
streams as an :class:`~trpc_bridge.server.http.event_stream.EventStream` (sse-starlette's
head, pings and disconnect handling, with less set-up per stream), unary results as the
SDK's ``JSONResponse`` writes them, errors as its 0.3 adapter writes them. The request
itself was parsed and checked once, by
:func:`~trpc_bridge.server.a2a.jsonrpc_request.parse_jsonrpc` (the one JSON-RPC error
mapping); this module only runs well-formed calls.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from a2a.compat.v0_3 import types as types_v03
from a2a.compat.v0_3.context_builders import V03ServerCallContextBuilder
from a2a.compat.v0_3.jsonrpc_adapter import _to_v03_jsonrpc_error
from a2a.server.context import ServerCallContext
from a2a.server.jsonrpc_models import InternalError
from a2a.types import SendMessageRequest
from a2a.utils.errors import A2AError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from trpc_bridge.codecs.a2a.json03 import JsonRpcId, StreamWriter, unary_response
from trpc_bridge.codecs.encoding import WireVersion
from trpc_bridge.server.a2a.after_answer import AfterAnswer, AnsweredResponse
from trpc_bridge.server.a2a.bug_boundary import INTERNAL_ERROR
from trpc_bridge.server.a2a.call_context import jsonrpc_contexts
from trpc_bridge.server.a2a.handler import BridgeRequestHandler
from trpc_bridge.server.a2a.jsonrpc_request import JsonRpcCall
from trpc_bridge.server.http.event_stream import EventStream

logger = logging.getLogger(__name__)

STREAM = "message/stream"
SEND = "message/send"


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
    rpc_error = _rpc_error(error) or types_v03.InternalError(message=INTERNAL_ERROR)
    response = types_v03.SendStreamingMessageResponse(
        root=types_v03.JSONRPCErrorResponse(id=request_id, error=rpc_error)
    )
    return _sse(response.model_dump_json(by_alias=True, exclude_none=True).encode())


def _error_response(request_id: JsonRpcId, error: Exception) -> JSONResponse:
    """The response the SDK's adapter writes when ``message/send`` raises."""
    rpc_error = _rpc_error(error) or InternalError(message=INTERNAL_ERROR)
    return JSONResponse(
        {"jsonrpc": "2.0", "id": request_id, "error": rpc_error.model_dump(by_alias=True)}
    )


class Jsonrpc03Methods:
    """0.3 ``message/stream`` / ``message/send`` for the JSON-RPC endpoint, after its
    parse (see :func:`~trpc_bridge.server.a2a.jsonrpc_route.jsonrpc_routes`)."""

    def __init__(self, handler: BridgeRequestHandler) -> None:
        self.handler = handler
        self._contexts = V03ServerCallContextBuilder(jsonrpc_contexts())

    def serves(self, call: JsonRpcCall) -> bool:
        return call.wire is WireVersion.V0_3 and call.method in (STREAM, SEND)

    async def respond(self, call: JsonRpcCall, request: Request) -> Response:
        """The answer to ``call`` (one that :meth:`serves`), made from ``request``."""
        assert isinstance(call.request, SendMessageRequest)
        # The call context as the SDK's 0.3 adapter builds it (0.3 has no tenant).
        context = self._contexts.build(request)
        context.state["method"] = call.method
        context.state["request_id"] = call.id
        if call.method == STREAM:
            return EventStream(self._frames(call.request, context, call.id))
        return await self._send(call.request, context, call.id)

    async def _send(
        self, core: SendMessageRequest, context: ServerCallContext, request_id: JsonRpcId
    ) -> Response:
        later = AfterAnswer()  # the task is stored once the answer has left
        later.attach(context)
        try:
            result = await self.handler.send_answer(core, context)
        except Exception as error:
            await later.run()
            return _error_response(request_id, error)
        return AnsweredResponse(unary_response(result, request_id), later)

    async def _frames(
        self, core: SendMessageRequest, context: ServerCallContext, request_id: JsonRpcId
    ) -> AsyncIterator[bytes]:
        writer = StreamWriter(request_id)
        # Text deltas as they come: the writer writes them from their run's bytes.
        batches = self.handler.stream_batches(core, context, text_deltas=True)
        try:
            async with contextlib.aclosing(batches):
                async for batch in batches:
                    # One write per batch; the bytes are those of one frame after another.
                    yield b"".join([_sse(writer.response(f)) for f in batch])
        except Exception as error:  # as the SDK's adapter: one error frame ends the stream
            yield _error_frame(request_id, error)
