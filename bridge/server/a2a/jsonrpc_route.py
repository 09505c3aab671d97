"""The JSON-RPC endpoint (A2A 0.3 and 1.0 on one URL): every body goes through
:func:`~trpc_bridge.server.a2a.jsonrpc_request.parse_jsonrpc` first, so a malformed request
gets its precise error (or, a notification, no answer) and a2a-sdk's dispatcher only
serves well-formed calls of known methods with valid params.

A route that serves some methods itself (instead of a2a-sdk's dispatcher) belongs here,
after the parse: it gets the :class:`~trpc_bridge.server.a2a.jsonrpc_request.JsonRpcCall`
with the parsed 1.0 request (:class:`OwnMethods`; the bridge's 0.3 ``message/stream`` and
``message/send`` are :class:`~trpc_bridge.server.a2a.jsonrpc03.Jsonrpc03Methods`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from trpc_bridge.names import A2A_VERSION_HEADER
from trpc_bridge.server.a2a.call_context import jsonrpc_contexts, note_jsonrpc_wire
from trpc_bridge.server.a2a.jsonrpc_request import (
    JsonRpcCall,
    JsonRpcFault,
    JsonRpcNotification,
    parse_jsonrpc,
)


class OwnMethods(Protocol):
    """Calls the endpoint answers itself instead of passing them to a2a-sdk."""

    def serves(self, call: JsonRpcCall) -> bool: ...

    async def respond(self, call: JsonRpcCall, request: Request) -> Response: ...


def jsonrpc_routes(
    handler: RequestHandler, paths: Iterable[str], *, own: OwnMethods | None = None
) -> list[BaseRoute]:
    """``POST`` routes at ``paths`` serving ``handler`` over JSON-RPC 0.3 and 1.0; the
    calls that ``own`` serves go to it."""
    dispatcher = JsonRpcDispatcher(
        request_handler=handler, context_builder=jsonrpc_contexts(), enable_v0_3_compat=True
    )

    async def endpoint(request: Request) -> Response:
        # body() is kept by the request: the dispatcher reads the same bytes again.
        parsed = parse_jsonrpc(await request.body(), request.headers.get(A2A_VERSION_HEADER))
        if isinstance(parsed, JsonRpcFault):
            return Response(parsed.body(), media_type="application/json")
        if isinstance(parsed, JsonRpcNotification):
            return Response(status_code=204)
        note_jsonrpc_wire(request, parsed.wire)
        if own is not None and own.serves(parsed):
            return await own.respond(parsed, request)
        return await dispatcher.handle_requests(request)

    return [Route(path, endpoint, methods=["POST"]) for path in paths]
