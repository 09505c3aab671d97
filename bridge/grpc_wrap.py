"""A gRPC method handler with its behaviour wrapped, as each of the bridge's server
interceptors (authentication, screening, metrics, tracing) needs it: the unary-unary or
unary-stream behaviour replaced by a wrapper of it, the (de)serializers kept. Neither A2A
nor AgentHost has client-streaming methods; their handlers are returned unchanged.

:class:`HandlerInterceptor` is the interceptor those four are: each finds the call's
handler and hands it to its own :meth:`~HandlerInterceptor.wrap`."""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

#: A wrapper of one kind of behaviour (the handler's ``unary_unary`` or ``unary_stream``).
Wrap = Callable[[Any], Any]


def wrapped(
    handler: grpc.RpcMethodHandler, *, unary: Wrap, stream: Wrap, decoded: bool = True
) -> grpc.RpcMethodHandler:
    """``handler`` with ``unary(behaviour)`` or ``stream(behaviour)`` in place of its own;
    not ``decoded``: the new behaviour gets the request's bytes (it decodes them itself)."""
    decoder = handler.request_deserializer if decoded else None
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            unary(handler.unary_unary),
            request_deserializer=decoder,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            stream(handler.unary_stream),
            request_deserializer=decoder,
            response_serializer=handler.response_serializer,
        )
    return handler


class HandlerInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """A server interceptor that serves each call with :meth:`wrap` of its method's
    handler; a method no servicer has (no handler: grpcio answers UNIMPLEMENTED) is seen
    by :meth:`unknown` and passed on."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            self.unknown(details)
            return None
        return self.wrap(handler, details)

    def unknown(self, details: grpc.HandlerCallDetails) -> None:
        """A call of a method no servicer has; nothing to do by default."""

    @abc.abstractmethod
    def wrap(
        self, handler: grpc.RpcMethodHandler, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler:
        """The handler to serve the call ``details`` with (often :func:`wrapped` of
        ``handler``, or ``handler`` itself)."""
