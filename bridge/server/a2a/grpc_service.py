"""a2a-sdk's gRPC servicers for A2A 1.0 (``lf.a2a.v1``, with the spec's error mapping) and
0.3 (``a2a.v1``, with the project's error wording).

Two differences from ``GrpcHandler`` as a2a-sdk 1.3 ships it, both required by A2A 1.0
§5.4 / §10 and checked by the TCK:

- ``PushNotificationNotSupportedError``, ``UnsupportedOperationError`` and
  ``VersionNotSupportedError`` end the call with ``UNIMPLEMENTED`` (the SDK says
  ``FAILED_PRECONDITION``), still with the ``google.rpc.ErrorInfo`` detail;
- an ``a2a-version`` metadata value this service does not speak (not 1.x) is refused
  with ``VersionNotSupportedError``; JSON-RPC and REST already refuse it. Without the
  key the call is served: the service name already says 1.0.

A2A 0.3 over gRPC names the error before its message, ``TaskNotFoundError: Task x not
found``: the A2A error name (A2A 0.3's error table), which a2a-sdk's 0.3 gRPC client
reads back into the typed error (without it a caller gets an untyped one). a2a-sdk's 0.3
servicer (``CompatGrpcHandler``) prefixes *any* exception's Python class name and quotes
a resource name it cannot read whole; :class:`BridgeCompatGrpcHandler` names only the
A2A errors (anything else is ``INTERNAL`` "internal server error") and words a bad
resource name itself. Every error message leaves bounded (:data:`MAX_DETAILS`): gRPC
carries it in a header (``docs/specs/a2a.md``).
"""

from __future__ import annotations

import grpc
from a2a.compat.v0_3.grpc_handler import CompatGrpcHandler
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import GrpcHandler

# The status code of each A2A error, as a2a-sdk's own servicers map them (both versions).
from a2a.server.request_handlers.grpc_handler import _ERROR_CODE_MAP
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.utils.errors import (
    A2A_ERROR_REASONS,
    JSON_RPC_ERROR_CODE_MAP,
    A2AError,
    InvalidParamsError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a.utils.grpc_status import status_to_grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from trpc_bridge.codecs.encoding import WireVersion
from trpc_bridge.names import A2A_VERSION_HEADER, shown_id
from trpc_bridge.server.a2a.call_context import GrpcVersionContextBuilder

#: Characters of an error message a call ends with at most.
MAX_DETAILS = 1024

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


def error_message(error: A2AError) -> str:
    """What an error says, bounded to :data:`MAX_DETAILS` characters."""
    text = str(getattr(error, "message", "") or "")
    return text if len(text) <= MAX_DETAILS else text[: MAX_DETAILS - 1] + "…"


class BridgeGrpcHandler(GrpcHandler):
    def __init__(self, request_handler: RequestHandler) -> None:
        super().__init__(request_handler, _VersionChecking(WireVersion.V1_0))

    async def abort_context(self, error: A2AError, context: grpc.aio.ServicerContext) -> None:
        error.message = error_message(error)
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
            message=error.message,
            details=[detail],
        )
        rich = status_to_grpc(status)
        context.set_trailing_metadata(tuple(rich.trailing_metadata))
        await context.abort(rich.code, rich.details)


class BridgeCompatGrpcHandler(CompatGrpcHandler):
    """a2a-sdk's A2A 0.3 servicer answering in the project's words (see the module doc)."""

    async def abort_context(self, error: A2AError, context: grpc.aio.ServicerContext) -> None:
        code = _ERROR_CODE_MAP.get(type(error))
        if code is None or type(error) not in JSON_RPC_ERROR_CODE_MAP:  # not an A2A error
            await context.abort(grpc.StatusCode.INTERNAL, "internal server error")
        else:  # A2A's name for the error (see the module doc), then its message
            await context.abort(code, f"{type(error).__name__}: {error_message(error)}")

    def _extract_task_id(self, resource_name: str) -> str:
        try:
            return super()._extract_task_id(resource_name)
        except InvalidParamsError:
            raise InvalidParamsError(
                message=f"{shown_id(resource_name)!r} is not a task name (tasks/<id>)"
            ) from None

    def _extract_task_and_config_id(self, resource_name: str) -> tuple[str, str]:
        try:
            return super()._extract_task_and_config_id(resource_name)
        except InvalidParamsError:
            raise InvalidParamsError(
                message=f"{shown_id(resource_name)!r} is not a push notification config name "
                "(tasks/<id>/pushNotificationConfigs/<id>)"
            ) from None
