""":class:`OpsOptions`: what a server exposes to its operator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from prometheus_client import CollectorRegistry

    from trpc_bridge.telemetry.span_buffer import SpanBuffer

#: Seconds a readiness check waits for the task store or the fan-out to answer.
DEFAULT_PROBE_TIMEOUT = 2.0


@dataclass(frozen=True)
class OpsOptions:
    #: Where the server's metrics go; ``None``: the global provider (``setup_metrics``),
    #: which records nothing unless metrics were set up.
    meter_provider: MeterProvider | None = None
    #: The Prometheus text to serve (``setup_metrics(prometheus=True).registry``);
    #: ``None``: nothing is scraped.
    prometheus: CollectorRegistry | None = None
    #: Also serve ``GET /metrics`` on the HTTP port (``--metrics-path``), behind the
    #: server's authentication like every other route ...
    metrics_path: bool = False
    #: ... unless this says it is public (``--metrics-public``: a scraper without
    #: credentials).
    metrics_public: bool = False
    #: A port of its own for ``/metrics``, ``/healthz`` and ``/readyz`` (``--metrics-port``);
    #: 0 = a free port; ``None`` = none.
    metrics_port: int | None = None
    #: One log line per request on the ``trpc_bridge.access`` logger.
    access_log: bool = False
    #: The playground's trace view: the spans it reads (and OTLP/HTTP span exports
    #: accepted at ``/v1/traces`` from loopback peers and authenticated callers);
    #: ``None``: off.
    span_buffer: SpanBuffer | None = None
    #: The server adds ``span_buffer`` to the global tracer provider (installing one if
    #: tracing is off) when it starts: the trace view of ``trpc-bridge serve``. Off, the
    #: buffer is fed by whoever added it to a provider (a library user, a test).
    global_span_buffer: bool = False
    #: Seconds between SIGTERM failing readiness and the server no longer accepting work
    #: (``--unready-delay``): time for a load balancer to stop sending new requests.
    unready_delay: float = 0.0
    probe_timeout: float = DEFAULT_PROBE_TIMEOUT
