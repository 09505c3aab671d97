"""The gRPC edge: every call on the gRPC port (A2A 1.0 and 0.3, AgentHost) goes through
the server's gate before its servicer runs, and before its request is even decoded.

Let in, the call's :class:`~.principal.Principal` is :data:`CALL_PRINCIPAL` for the rest
of the call (grpcio runs each call in a task of its own, so the value is the call's
alone); the runner's identity rule reads it from there. Refused, the call ends with the
refusal's status (:mod:`.answers`); an ``UNAUTHENTICATED`` one also carries the challenge
as ``www-authenticate`` trailing metadata.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator
from typing import Any

import grpc

from trpc_bridge.grpc_wrap import HandlerInterceptor, wrapped
from trpc_bridge.server.auth.answers import answer
from trpc_bridge.server.auth.authenticator import AuthGate
from trpc_bridge.server.auth.errors import AuthError, Unauthenticated
from trpc_bridge.server.auth.presented import from_grpc
from trpc_bridge.server.auth.principal import Principal
from trpc_bridge.server.refusals import log_refusal

#: The principal of the gRPC call being served (None outside a call let in by the edge).
CALL_PRINCIPAL: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "trpc_bridge_call_principal", default=None
)


class GrpcAuthentication(HandlerInterceptor):
    """The interceptor; install it first on the bridge's gRPC server."""

    def __init__(self, gate: AuthGate) -> None:
        self.gate = gate

    async def _admit(self, method: str, context: grpc.aio.ServicerContext) -> None:
        try:
            CALL_PRINCIPAL.set(await self.gate.admit(from_grpc(context)))
        except AuthError as refusal:
            found = answer(refusal)
            if isinstance(refusal, Unauthenticated):
                challenge = self.gate.challenge(refusal)
                if challenge:
                    context.set_trailing_metadata((("www-authenticate", challenge),))
            log_refusal(
                f"gRPC {method}", context.peer(), f"{found.grpc_code.name} {refusal.message}"
            )
            await context.abort(found.grpc_code, refusal.message)

    def wrap(
        self, handler: grpc.RpcMethodHandler, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler:
        method: str = details.method
        admit = self._admit

        def unary(behavior: Any) -> Any:
            async def admitted(request: Any, context: grpc.aio.ServicerContext) -> Any:
                await admit(method, context)
                return await behavior(request, context)

            return admitted

        def stream(streaming: Any) -> Any:
            async def admitted(
                request: Any, context: grpc.aio.ServicerContext
            ) -> AsyncIterator[Any]:
                await admit(method, context)
                async for response in streaming(request, context):
                    yield response

            return admitted

        return wrapped(handler, unary=unary, stream=stream)
