"""a2a-sdk's gRPC servicer for A2A 1.0 (``lf.a2a.v1``) with the spec's error mapping.

Two differences from ``GrpcHandler`` as a2a-sdk 1.3 ships it, both required by A2A 1.0
§5.4 / §10 and checked by the TCK:

- ``PushNotificationNotSupportedError``, ``UnsupportedOperationError`` and
  ``VersionNotSupportedError`` end the call with ``UNIMPLEMENTED`` (the SDK says
  ``FAILED_PRECONDITION``), still with the ``google.rpc.ErrorInfo`` detail;
- an ``a2a-version`` metadata value this service does not speak (not 1.x) is refused
  with ``VersionNotSupportedError``; JSON-RPC and REST already refuse it. Without the
  key the call is served: the service name already says 1.0.
"""

from __future__ import annotations

import grpc
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import GrpcHandler
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.utils.errors import (
    A2A_ERROR_REASONS,
    A2AError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a.utils.grpc_status import status_to_grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from trpc_bridge.codecs.encoding import WireVersion
from trpc_bridge.names import A2A_VERSION_HEADER
from trpc_bridge.server.a2a.call_context import GrpcVersionContextBuilder

_UNIMPLEMENTED = (
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)


class _VersionChecking(GrpcVersionContextBuilder):
    def build(self, context: grpc.aio.ServicerContext) -> ServerCallContext:
        key = A2A_VERSION_HEADER.lower()
        for name, value in context.invocation_metadata() or ():
            if name.lower() == key:
                version = value.decode() if isinstance(value, bytes) else str(value)
                if version.strip().split(".", 1)[0] != "1":
                    raise VersionNotSupportedError(
                        message=f"A2A version {version!r} is not supported on this service (1.0)"
                    )
        return super().build(context)


class BridgeGrpcHandler(GrpcHandler):
    def __init__(self, request_handler: RequestHandler) -> None:
        super().__init__(request_handler, _VersionChecking(WireVersion.V1_0))

    async def abort_context(self, error: A2AError, context: grpc.aio.ServicerContext) -> None:
        if not isinstance(error, _UNIMPLEMENTED):
            await super().abort_context(error, context)
            return
        info = error_details_pb2.ErrorInfo(
            reason=A2A_ERROR_REASONS.get(type(error), "UNKNOWN_ERROR"), domain="a2a-protocol.org"
        )
        detail = any_pb2.Any()
        detail.Pack(info)
        status = status_pb2.Status(
            code=grpc.StatusCode.UNIMPLEMENTED.value[0],
            message=getattr(error, "message", str(error)),
            details=[detail],
        )
        rich = status_to_grpc(status)
        context.set_trailing_metadata(tuple(rich.trailing_metadata))
        await context.abort(rich.code, rich.details)
