"""An a2a-sdk call (``ServerCallContext``) as the runner's :class:`IncomingCall`.

a2a-sdk builds one context per call on every transport: HTTP puts the request headers in
``state["headers"]`` (JSON-RPC adds the method name in ``state["method"]``), gRPC puts
the servicer context in ``state["grpc_context"]``. Which A2A version the caller speaks
comes from the JSON-RPC method name (``message/send`` is 0.3, ``SendMessage`` is 1.0),
from the ``A2A-Version`` header on REST (a2a-sdk: missing = 0.3), and on gRPC from the
service that answered, which :class:`GrpcVersionContextBuilder` records.
"""

from __future__ import annotations

import grpc
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.grpc_handler import (
    DefaultGrpcServerCallContextBuilder,
)
from a2a.utils.errors import InvalidParamsError

from trpc_bridge.codecs.encoding import WireVersion
from trpc_bridge.names import A2A_VERSION_HEADER, TRANSPORT_GRPC, TRANSPORT_JSONRPC, TRANSPORT_REST
from trpc_bridge.server.auth.errors import AuthError
from trpc_bridge.server.auth.grpc_edge import CALL_PRINCIPAL
from trpc_bridge.server.identity import a2a_principal, context_headers
from trpc_bridge.server.runner import AgentRunner, IncomingCall

_VERSION_KEY = "a2a_version"


class GrpcVersionContextBuilder(DefaultGrpcServerCallContextBuilder):
    """a2a-sdk's gRPC context, plus the A2A version of the service it serves."""

    def __init__(self, version: WireVersion) -> None:
        self.version = version

    def build(self, context: grpc.aio.ServicerContext) -> ServerCallContext:
        built = super().build(context)
        built.state[_VERSION_KEY] = self.version
        principal = CALL_PRINCIPAL.get()  # what the gRPC edge verified (identity.py)
        if principal is not None:
            built.state["auth"] = principal
        return built


def requested_major(header: str | None) -> str:
    """The major A2A version an ``A2A-Version`` header asks for, as a2a-sdk reads it: no
    header is 0.3, and any ``1.x`` is served as 1.0."""
    version = (header or "").strip()
    return version.split(".", 1)[0] if version else "0"


def wire_version(context: ServerCallContext) -> WireVersion:
    state = context.state
    if _VERSION_KEY in state:
        return WireVersion(state[_VERSION_KEY])
    method = state.get("method")
    if isinstance(method, str):
        return WireVersion.V0_3 if "/" in method else WireVersion.V1_0
    header = context_headers(context).get(A2A_VERSION_HEADER.lower())
    return WireVersion.V1_0 if requested_major(header) == "1" else WireVersion.V0_3


def _transport(context: ServerCallContext) -> str:
    if "grpc_context" in context.state:
        return TRANSPORT_GRPC
    return TRANSPORT_JSONRPC if "method" in context.state else TRANSPORT_REST


def a2a_caller(context: ServerCallContext, runner: AgentRunner) -> IncomingCall:
    """The caller of an A2A call, by ``runner``'s identity rule. The edges refuse bad
    credentials before a call gets here; a call that passed no edge and cannot be
    identified (``identity.unscreened``) is an invalid-params error."""
    try:
        return runner.caller_of(
            a2a_principal(context),
            context_headers(context),
            transport=_transport(context),
            protocol_version=wire_version(context),
        )
    except AuthError as exc:
        raise InvalidParamsError(message=exc.message) from None
