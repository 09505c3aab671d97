"""``GET /metrics``: the server's metrics as Prometheus text, written by the OpenTelemetry
Prometheus exporter from the same instruments the OTLP exporter reads; and the app of
the metrics port (``--metrics-port``), which also answers the probes.

The metrics port is a listener of its own: it keeps answering while the HTTP port has
stopped accepting during a drain, so ``/readyz`` stays readable (503) to the end.
"""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from trpc_bridge.server.ops.probes import Readiness, probe_routes
from trpc_bridge.telemetry.metrics_setup import prometheus_text

METRICS_PATH = "/metrics"


def metrics_routes(registry: CollectorRegistry) -> list[BaseRoute]:
    async def scrape(_: Request) -> Response:
        # Collecting walks every instrument: off the event loop, so serving goes on.
        body, media_type = await asyncio.to_thread(prometheus_text, registry)
        return Response(body, headers={"Content-Type": media_type, "Cache-Control": "no-store"})

    return [Route(METRICS_PATH, scrape, methods=["GET"])]


def metrics_port_app(registry: CollectorRegistry | None, readiness: Readiness) -> Starlette:
    routes = probe_routes(readiness)
    if registry is not None:
        routes += metrics_routes(registry)
    return Starlette(routes=routes)
