"""The gRPC port's side of operations: the standard health service (``grpc.health.v1``,
through grpcio's health package) answering with the server's readiness, and one
interceptor for the call metrics (``rpc.server.duration``, open streams) and access lines.

The health service knows the overall status (``""``) and each A2A / AgentHost service by
name. ``Check`` runs the readiness checks (shared with ``/readyz``, reused for half a
second) and answers ``SERVING`` or ``NOT_SERVING``; from SIGTERM on every service is
``NOT_SERVING`` for good, and ``Watch`` streams see it at once.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio

from trpc_bridge.grpc_wrap import HandlerInterceptor, wrapped
from trpc_bridge.names import TRANSPORT_GRPC
from trpc_bridge.server.ops.probes import Readiness
from trpc_bridge.server.refusals import clean
from trpc_bridge.telemetry.logs import ACCESS_LOGGER, FIELDS, request_fields, reset_request_fields
from trpc_bridge.telemetry.metrics import BridgeMetrics

access = logging.getLogger(ACCESS_LOGGER)

_SERVING = health_pb2.HealthCheckResponse.SERVING
_NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
_HEALTH_SERVICE = "grpc.health.v1.Health"


class ReadinessHealth(health_aio.HealthServicer):  # type: ignore[misc]
    """grpcio's health servicer, its statuses refreshed from :class:`Readiness`."""

    def __init__(self, readiness: Readiness, services: Iterable[str]) -> None:
        super().__init__()
        self._readiness = readiness
        self._services = ["", *services]
        for service in self._services:
            self._server_status[service] = _SERVING
        readiness.on_drain.append(self.enter_graceful_shutdown)

    async def Check(self, request: health_pb2.HealthCheckRequest, context: Any) -> Any:
        if request.service in self._server_status:
            report = await self._readiness.report()
            status = _SERVING if report.ready else _NOT_SERVING
            for service in self._services:
                await self.set(service, status)
        return await super().Check(request, context)


def add_health(server: grpc.aio.Server, readiness: Readiness, services: Iterable[str]) -> None:
    health_pb2_grpc.add_HealthServicer_to_server(ReadinessHealth(readiness, services), server)


_Behavior = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Any]


class ObservedCalls(HandlerInterceptor):
    """Times each call of a registered method (the health service's own excepted): its
    ``rpc.server.duration`` and, for server streams, the open-streams count; one access
    line per call when ``access_log``."""

    def __init__(self, metrics: BridgeMetrics | None, *, access_log: bool) -> None:
        self._metrics = metrics
        self._access_log = access_log

    def wrap(
        self, handler: grpc.RpcMethodHandler, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler:
        service, _, method = details.method.lstrip("/").rpartition("/")
        if service == _HEALTH_SERVICE:
            return handler
        path = details.method
        return wrapped(
            handler,
            unary=lambda behavior: self._unary(behavior, service, method, path),
            stream=lambda behavior: self._stream(behavior, service, method, path),
        )

    def _done(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        service: str,
        method: str,
        path: str,
        started: float,
        failed: BaseException | None,
    ) -> None:
        code = _code(context, failed)
        elapsed = time.perf_counter() - started
        if self._metrics is not None:
            self._metrics.rpc_call(service, method, code.value[0], elapsed * 1000)
        if self._access_log:
            access.info(
                "gRPC %s %s %.1f ms",
                clean(path),
                code.name,
                elapsed * 1000,
                extra={
                    FIELDS: {
                        "rpc.method": clean(path),
                        "rpc.grpc.status_code": code.value[0],
                        "duration_ms": round(elapsed * 1000, 3),
                        "client.address": clean(context.peer() or ""),
                    }
                },
            )

    def _call(self, stream: bool, service: str, method: str, path: str) -> _Scope:
        """What opens and closes one call: its timer, access-line fields, stream count."""
        metrics = self._metrics if stream else None

        def opened() -> tuple[float, Any]:
            if metrics is not None:
                metrics.stream_opened(TRANSPORT_GRPC)
            token = request_fields(TRANSPORT_GRPC)[1] if self._access_log else None
            return time.perf_counter(), token

        def closed(context: Any, started: float, token: Any, failed: BaseException | None) -> None:
            if metrics is not None:
                metrics.stream_closed(TRANSPORT_GRPC)
            self._done(context, service, method, path, started, failed)
            if token is not None:
                reset_request_fields(token)

        return opened, closed

    def _unary(self, inner: _Behavior, service: str, method: str, path: str) -> _Behavior:
        return _awaited(inner, self._call(False, service, method, path))

    def _stream(self, inner: _Behavior, service: str, method: str, path: str) -> _Behavior:
        opened, closed = scope = self._call(True, service, method, path)
        if not inspect.isasyncgenfunction(inner):  # a handler that writes with context.write
            return _awaited(inner, scope)

        async def streaming(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            started, token = opened()
            failed: BaseException | None = None
            try:
                async for response in inner(request, context):
                    yield response
            except BaseException as exc:
                failed = exc
                raise
            finally:
                closed(context, started, token, failed)

        return streaming


#: A call's opening (its start and log token) and closing.
_Scope = tuple[
    Callable[[], tuple[float, Any]],
    Callable[[Any, float, Any, "BaseException | None"], None],
]


def _awaited(inner: _Behavior, scope: _Scope) -> _Behavior:
    """``inner`` (a coroutine behaviour) inside ``scope``."""
    opened, closed = scope

    async def behavior(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        started, token = opened()
        failed: BaseException | None = None
        try:
            return await inner(request, context)
        except BaseException as exc:
            failed = exc
            raise
        finally:
            closed(context, started, token, failed)

    return behavior


def _code(
    context: grpc.aio.ServicerContext[Any, Any], failed: BaseException | None
) -> grpc.StatusCode:
    """The call's status: what the handler set (``abort``, ``set_code``), else OK, or
    CANCELLED / UNKNOWN for a call that ended by an exception without one."""
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    if isinstance(code, int):  # grpc.aio gives the raw number in some versions
        for status in grpc.StatusCode:
            if status.value[0] == code:
                return status
    if failed is None:
        return grpc.StatusCode.OK
    if isinstance(failed, (GeneratorExit, StopAsyncIteration)):
        return grpc.StatusCode.OK
    if isinstance(failed, asyncio.CancelledError):
        return grpc.StatusCode.CANCELLED
    return grpc.StatusCode.UNKNOWN
