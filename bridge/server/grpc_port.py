"""The gRPC port, assembled: A2A 1.0 and 0.3 (two service names on one server), the
AgentHost service, the health service, the interceptors every call passes (operations,
authentication, the screen) and the limits that bound a call as HTTP's bound a request."""

from __future__ import annotations

import grpc
from a2a.compat.v0_3 import a2a_v0_3_pb2_grpc
from a2a.types import a2a_pb2_grpc

from trpc_bridge.codecs.encoding import WireVersion
from trpc_bridge.server.a2a.call_context import GrpcVersionContextBuilder
from trpc_bridge.server.a2a.grpc_screen import GrpcScreen
from trpc_bridge.server.a2a.grpc_service import BridgeCompatGrpcHandler, BridgeGrpcHandler
from trpc_bridge.server.a2a.handler import BridgeRequestHandler
from trpc_bridge.server.auth.authenticator import AuthGate
from trpc_bridge.server.auth.grpc_edge import GrpcAuthentication
from trpc_bridge.server.doors.agent_host import add_agent_host
from trpc_bridge.server.ops.operations import Operations
from trpc_bridge.server.options import Limits
from trpc_bridge.server.runner import AgentRunner

#: The gRPC services the health service reports on (besides the server as a whole).
A2A_SERVICES = ("lf.a2a.v1.A2AService", "a2a.v1.A2AService")
AGENT_HOST_SERVICE = "trpc_bridge.v1.AgentHost"


def grpc_server(
    handler: BridgeRequestHandler,
    runner: AgentRunner,
    gate: AuthGate,
    ops: Operations,
    limits: Limits,
) -> grpc.aio.Server:
    """A gRPC server with every service added, not yet bound to a port."""
    server = grpc.aio.server(
        # Authentication first: a call is let in before its request is even decoded.
        interceptors=[
            *ops.grpc_interceptors(),
            GrpcAuthentication(gate),
            GrpcScreen(max_metadata=limits.max_header_lines),
        ],
        maximum_concurrent_rpcs=limits.max_connections,
        options=[
            ("grpc.max_receive_message_length", limits.max_request_bytes),
            # A call's metadata is its request head: the same bound as HTTP's.
            ("grpc.max_metadata_size", limits.max_header_bytes),
            ("grpc.absolute_max_metadata_size", limits.max_header_bytes),
            # The HTTP/2 handshake of a new connection: gRPC's request-head deadline.
            ("grpc.server_handshake_timeout_ms", int(limits.header_timeout * 1000)),
            # gRPC shares a busy port by default (SO_REUSEPORT): a second bridge on the
            # same port would start and split the traffic. Fail instead.
            ("grpc.so_reuseport", 0),
        ],
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(  # type: ignore[no-untyped-call]
        BridgeGrpcHandler(handler), server
    )
    # A2A 0.3 over gRPC: another service name, so the same server and port.
    a2a_v0_3_pb2_grpc.add_A2AServiceServicer_to_server(  # type: ignore[no-untyped-call]
        BridgeCompatGrpcHandler(handler, GrpcVersionContextBuilder(WireVersion.V0_3)), server
    )
    # The event model itself, for callers that do not speak A2A (any language).
    add_agent_host(runner, server)
    ops.add_health(server, [*A2A_SERVICES, AGENT_HOST_SERVICE])
    return server
