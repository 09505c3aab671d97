"""gRPC calls screened like HTTP ones: a precise status for a client's mistake, one log
line per refused call, a traceback only for the server's own bug.

grpcio decodes the request before the servicer runs; bytes that are not the method's
protobuf message (garbage, invalid UTF-8 in a string field, nesting past protobuf's
limit) end as ``UNKNOWN`` with "Unexpected <class 'DecodeError'>: …". The interceptor
takes the decoding over: such a request is ``INVALID_ARGUMENT`` naming the message type.
A servicer that raises anything but an abort is the server's bug: logged with its
traceback, answered ``INTERNAL`` without Python's text. Every other non-OK status is a
refusal, logged by :func:`~trpc_bridge.server.refusals.log_refusal`.

A call's metadata is its request head: grpcio bounds its size (the server's
``grpc.max_metadata_size`` options), the screen the number of its entries, as HTTP bounds
header lines (``RESOURCE_EXHAUSTED``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from trpc_bridge.grpc_wrap import HandlerInterceptor, wrapped
from trpc_bridge.server.options import Limits
from trpc_bridge.server.refusals import log_refusal

logger = logging.getLogger(__name__)

#: Statuses that refuse nothing: success, the caller's own cancel, the server's failures.
_NOT_REFUSALS = frozenset(
    {None, grpc.StatusCode.OK, grpc.StatusCode.CANCELLED, grpc.StatusCode.INTERNAL}
)

Decoder = Callable[[bytes], Any]


def decode_request(decoder: Decoder, raw: bytes, method: str) -> tuple[Any, str]:
    """The request, or why it is not one (empty reason: decoded)."""
    try:
        return decoder(raw), ""
    except (DecodeError, RuntimeError, ValueError):  # RuntimeError: protobuf's depth limit
        message_type = getattr(decoder, "__self__", None)
        kind = getattr(message_type, "__name__", method.rsplit("/", 1)[-1])
        return None, f"the request is not a valid {kind} protobuf message"


class _Call:
    """One RPC seen by the screen: decoding, the bug boundary, the refusal line."""

    def __init__(self, method: str, context: grpc.aio.ServicerContext, max_metadata: int) -> None:
        self.method = method
        self.context = context
        self.max_metadata = max_metadata

    async def request(self, decoder: Decoder | None, raw: bytes) -> Any:
        if len(self.context.invocation_metadata() or ()) > self.max_metadata:
            await self.context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"more than {self.max_metadata} metadata entries",
            )
        if decoder is None:
            return raw
        request, refused = decode_request(decoder, raw, self.method)
        if refused:
            await self.context.abort(grpc.StatusCode.INVALID_ARGUMENT, refused)
        return request

    @contextlib.asynccontextmanager
    async def guarded(self) -> AsyncIterator[None]:
        """Around the servicer: its unexpected exception is a bug (logged with its
        traceback, answered INTERNAL without its text); any refusal is logged once."""
        try:
            yield
        except (asyncio.CancelledError, grpc.aio.AbortError, GeneratorExit):
            raise
        except Exception as exc:
            logger.error("gRPC %s failed", self.method, exc_info=exc)
            await self.context.abort(grpc.StatusCode.INTERNAL, "internal server error")
        finally:
            code = self.context.code()
            if isinstance(code, grpc.StatusCode) and code not in _NOT_REFUSALS:
                answer = f"{code.name} {self.context.details() or ''}".rstrip()
                log_refusal(f"gRPC {self.method}", self.context.peer(), answer)


def _unary(
    method: str,
    behavior: Callable[[Any, Any], Awaitable[Any]],
    decoder: Decoder | None,
    max_metadata: int,
) -> Callable[[bytes, grpc.aio.ServicerContext], Awaitable[Any]]:
    async def screened(raw: bytes, context: grpc.aio.ServicerContext) -> Any:
        call = _Call(method, context, max_metadata)
        async with call.guarded():
            return await behavior(await call.request(decoder, raw), context)

    return screened


def _streaming(
    method: str,
    behavior: Callable[[Any, Any], AsyncIterator[Any]],
    decoder: Decoder | None,
    max_metadata: int,
) -> Callable[[bytes, grpc.aio.ServicerContext], AsyncIterator[Any]]:
    async def screened(raw: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        call = _Call(method, context, max_metadata)
        async with call.guarded():
            async for response in behavior(await call.request(decoder, raw), context):
                yield response

    return screened


class GrpcScreen(HandlerInterceptor):
    """The interceptor; install it on the bridge's gRPC server (both A2A services).
    ``max_metadata``: metadata entries a call may have."""

    def __init__(self, *, max_metadata: int = Limits.max_header_lines) -> None:
        self.max_metadata = max_metadata

    def unknown(self, details: grpc.HandlerCallDetails) -> None:
        # grpcio answers UNIMPLEMENTED; the peer is not known here.
        log_refusal(f"gRPC {details.method}", "-", "UNIMPLEMENTED no such method")

    def wrap(
        self, handler: grpc.RpcMethodHandler, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler:
        method: str = details.method
        decoder = handler.request_deserializer
        return wrapped(  # the screen decodes the request itself (a refusal, not a crash)
            handler,
            unary=lambda behavior: _unary(method, behavior, decoder, self.max_metadata),
            stream=lambda behavior: _streaming(method, behavior, decoder, self.max_metadata),
            decoded=False,
        )
