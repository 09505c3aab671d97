""":class:`Operations`: everything of :mod:`trpc_bridge.server.ops` one server installs, so
the server asks one object for its routes, middleware and gRPC parts, and tells it when
it starts, drains and stops."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import grpc
from a2a.server.tasks import TaskStore
from sqlalchemy import text
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from trpc_bridge.server.http.listener import HttpListener
from trpc_bridge.server.ops.access_log import ObservedRequests
from trpc_bridge.server.ops.grpc_ops import ObservedCalls, add_health
from trpc_bridge.server.ops.metrics_routes import (
    METRICS_PATH,
    metrics_port_app,
    metrics_routes,
)
from trpc_bridge.server.ops.probes import (
    HEALTH_PATH,
    READY_PATH,
    Check,
    Readiness,
    probe_routes,
)
from trpc_bridge.server.ops.trace_view import OTLP_TRACES_PATH, trace_view_routes
from trpc_bridge.server.options import OpsOptions
from trpc_bridge.server.replicas.fanout import FanOut
from trpc_bridge.server.tasks.registry import TaskRegistry
from trpc_bridge.telemetry.metrics import metrics_for
from trpc_bridge.telemetry.setup import add_span_processor


class Operations:
    def __init__(self, options: OpsOptions, *, agent_name: str) -> None:
        self.options = options
        self.agent_name = agent_name
        #: The server's instruments; ``None``: metrics are off.
        self.metrics = metrics_for(options.meter_provider)
        self.readiness = Readiness({}, timeout=options.probe_timeout)
        self._listener: HttpListener | None = None
        self._unwatch: list[Any] = []
        self._installed = False

    # --- what the server is made of -----------------------------------------------------

    def watch(self, registry: TaskRegistry, store: TaskStore, fanout: FanOut | None) -> None:
        """Readiness checks for the store and the fan-out; the running tasks gauge."""
        engine = getattr(store, "engine", None)
        if engine is not None:

            async def store_answers() -> None:
                async with engine.connect() as connection:
                    await connection.execute(text("SELECT 1"))

            self.readiness.checks["task_store"] = store_answers
        if fanout is not None:
            fanout_check: Check = fanout.ping
            self.readiness.checks["fanout"] = fanout_check
        if self.metrics is not None:
            attributes = {"gen_ai.agent.name": self.agent_name}
            unwatch = self.metrics.watch_running(attributes, lambda: len(registry.running()))
            self._unwatch.append(unwatch)

    def routes(self, base_path: str, *, playground: bool) -> list[BaseRoute]:
        """Probes at the root; ``/metrics`` when asked for; the trace view with the
        playground."""
        routes = probe_routes(self.readiness)
        if self.options.metrics_path and self.options.prometheus is not None:
            routes += metrics_routes(self.options.prometheus)
        if playground or self.options.span_buffer is not None:
            routes += trace_view_routes(self.options.span_buffer, base_path)
        return routes

    def public_paths(self) -> list[str]:
        """Read without credentials: the probes, and ``/metrics`` when it is served and
        declared public (``--metrics-public``); otherwise it asks for the credentials
        every route of the server asks for."""
        paths = [HEALTH_PATH, READY_PATH]
        options = self.options
        if options.metrics_path and options.metrics_public and options.prometheus is not None:
            paths.append(METRICS_PATH)
        return paths

    def unchecked_paths(self, base_path: str) -> list[str]:
        """Paths whose POST is not JSON (the OTLP receiver)."""
        return [base_path.rstrip("/") + OTLP_TRACES_PATH] if self.options.span_buffer else []

    def loopback_paths(self, base_path: str) -> list[str]:
        """Paths a loopback peer reaches without credentials: the OTLP receiver, so that
        an upstream agent on this machine can export its spans to the trace view (others
        must authenticate: :func:`~.trace_view.may_send_spans`)."""
        return self.unchecked_paths(base_path)

    def middleware(self, transports: dict[str, str]) -> list[Middleware]:
        """The outermost middleware, when metrics or the access log are on."""
        if self.metrics is None and not self.options.access_log:
            return []
        return [
            Middleware(
                ObservedRequests,
                metrics=self.metrics,
                access_log=self.options.access_log,
                transports=list(transports.items()),
            )
        ]

    def grpc_interceptors(self) -> list[grpc.aio.ServerInterceptor]:
        if self.metrics is None and not self.options.access_log:
            return []
        return [ObservedCalls(self.metrics, access_log=self.options.access_log)]

    def add_health(self, server: grpc.aio.Server, services: list[str]) -> None:
        add_health(server, self.readiness, services)

    # --- lifecycle ------------------------------------------------------------------------

    def install_span_buffer(self) -> None:
        """Before serving: the span buffer into the global tracer provider, when asked."""
        buffer = self.options.span_buffer
        if buffer is not None and self.options.global_span_buffer and not self._installed:
            self._installed = True
            add_span_processor(buffer)  # None with OTEL_SDK_DISABLED: the view stays empty

    async def start(self, host: str) -> None:
        """Bind and serve the metrics port, if there is one."""
        if self.options.metrics_port is None:
            return
        self._listener = HttpListener(host, self.options.metrics_port, signals=False)
        await self._listener.start(metrics_port_app(self.options.prometheus, self.readiness))

    @property
    def metrics_port(self) -> int | None:
        return self._listener.port if self._listener is not None else None

    async def drain(self, forced: asyncio.Event) -> None:
        """SIGTERM: readiness fails now; the server keeps accepting ``unready_delay``
        seconds more (less after a second signal)."""
        await self.readiness.drain()
        if self.options.unready_delay > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(forced.wait(), self.options.unready_delay)

    async def stop(self) -> None:
        for unwatch in self._unwatch:
            unwatch()
        self._unwatch.clear()
        if self._listener is not None:
            await self._listener.stop()
            self._listener = None
