"""An a2a-sdk call (``ServerCallContext``) as the runner's :class:`IncomingCall`.

a2a-sdk builds one context per call on every transport, with a builder the door gives
it. The bridge's builders (:class:`HttpDoorContexts` for JSON-RPC and REST,
:class:`GrpcVersionContextBuilder` for gRPC) record which door the call came through, as
a :class:`Door`: its transport, and the A2A version the caller speaks — from the
JSON-RPC method, as the endpoint's parse found it (:func:`note_jsonrpc_wire`), from the
``A2A-Version`` header on REST (a2a-sdk: missing = 0.3), and on gRPC from the service
that answered.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.grpc_handler import DefaultGrpcServerCallContextBuilder
from a2a.server.routes.common import DefaultServerCallContextBuilder, ServerCallContextBuilder
from a2a.utils.errors import InternalError, InvalidParamsError
from starlette.requests import Request

from trpc_bridge.codecs.encoding import WireVersion
from trpc_bridge.names import A2A_VERSION_HEADER, TRANSPORT_GRPC, TRANSPORT_JSONRPC, TRANSPORT_REST
from trpc_bridge.server.auth.errors import AuthError
from trpc_bridge.server.auth.grpc_edge import CALL_PRINCIPAL
from trpc_bridge.server.identity import a2a_principal, context_headers
from trpc_bridge.server.runner import AgentRunner, IncomingCall


@dataclass(frozen=True)
class Door:
    """The A2A door a call came through."""

    #: ``JSONRPC``, ``HTTP+JSON`` or ``GRPC``.
    transport: str
    wire: WireVersion


#: Where a context keeps its :class:`Door` (a key of the bridge's own).
_DOOR = "trpc_bridge.door"
#: Where the JSON-RPC endpoint notes the parsed call's wire for the context builder.
_JSONRPC_WIRE = "trpc_bridge.jsonrpc_wire"


def requested_major(header: str | None) -> str:
    """The major A2A version an ``A2A-Version`` header asks for, as a2a-sdk reads it: no
    header is 0.3, and any ``1.x`` is served as 1.0."""
    version = (header or "").strip()
    return version.split(".", 1)[0] if version else "0"


def note_jsonrpc_wire(request: Request, wire: WireVersion) -> None:
    """The JSON-RPC endpoint's parse found ``wire`` (from the method's name): the
    context a2a-sdk builds for ``request`` records it."""
    request.scope[_JSONRPC_WIRE] = wire


class HttpDoorContexts(ServerCallContextBuilder):
    """a2a-sdk's HTTP context (``inner``), plus the :class:`Door`."""

    def __init__(self, transport: str, inner: ServerCallContextBuilder | None = None) -> None:
        self.transport = transport
        self._inner = inner or DefaultServerCallContextBuilder()

    def build(self, request: Request) -> ServerCallContext:
        context = self._inner.build(request)
        wire = request.scope.get(_JSONRPC_WIRE)
        if not isinstance(wire, WireVersion):  # REST: the header says
            header = request.headers.get(A2A_VERSION_HEADER)
            wire = WireVersion.V1_0 if requested_major(header) == "1" else WireVersion.V0_3
        context.state[_DOOR] = Door(self.transport, wire)
        return context


def jsonrpc_contexts(inner: ServerCallContextBuilder | None = None) -> HttpDoorContexts:
    return HttpDoorContexts(TRANSPORT_JSONRPC, inner)


def rest_contexts() -> HttpDoorContexts:
    return HttpDoorContexts(TRANSPORT_REST)


class GrpcVersionContextBuilder(DefaultGrpcServerCallContextBuilder):
    """a2a-sdk's gRPC context, plus the :class:`Door` of the service it serves."""

    def __init__(self, version: WireVersion) -> None:
        self.version = version

    def build(self, context: grpc.aio.ServicerContext) -> ServerCallContext:
        built = super().build(context)
        built.state[_DOOR] = Door(TRANSPORT_GRPC, self.version)
        principal = CALL_PRINCIPAL.get()  # what the gRPC edge verified (identity.py)
        if principal is not None:
            built.state["auth"] = principal
        return built


def door(context: ServerCallContext) -> Door:
    """The door of ``context``; a context no bridge builder made is a server bug."""
    found = context.state.get(_DOOR)
    if not isinstance(found, Door):
        raise InternalError(message="call context without its door")
    return found


def wire_version(context: ServerCallContext) -> WireVersion:
    return door(context).wire


def a2a_caller(context: ServerCallContext, runner: AgentRunner) -> IncomingCall:
    """The caller of an A2A call, by ``runner``'s identity rule. The edges refuse bad
    credentials before a call gets here; a call that passed no edge and cannot be
    identified (``identity.unscreened``) is an invalid-params error."""
    entry = door(context)
    try:
        return runner.caller_of(
            a2a_principal(context),
            context_headers(context),
            transport=entry.transport,
            protocol_version=entry.wire,
        )
    except AuthError as exc:
        raise InvalidParamsError(message=exc.message) from None
