"""Process-wide metrics set-up: OTLP export from the standard ``OTEL_*`` variables, and
Prometheus text through the OpenTelemetry Prometheus exporter.

Metrics are off unless something reads them: ``OTEL_METRICS_EXPORTER`` (``otlp``,
``console``; unset means ``otlp`` when an OTLP endpoint is set, as for traces) or a
Prometheus scrape (``--metrics-port`` / ``--metrics-path``). Off, no meter provider is
installed and :func:`trpc_bridge.telemetry.metrics.metrics_for` returns ``None``.

The OTLP reader exports every ``OTEL_METRIC_EXPORT_INTERVAL`` ms (the SDK's default,
60 s); the endpoint, headers and protocol details come from the SDK's own variables.
Exemplars are off unless ``OTEL_METRICS_EXEMPLAR_FILTER`` asks for them: the default
filter samples a span context on every measurement, a cost on every request for data
the Prometheus text does not show.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opentelemetry import metrics

from trpc_bridge.telemetry.setup import exporter_names, sdk_disabled, service_resource

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics import ExemplarFilter, MeterProvider
    from opentelemetry.sdk.metrics.export import MetricReader
    from prometheus_client import CollectorRegistry

logger = logging.getLogger(__name__)

_EXEMPLAR_FILTER_ENV = "OTEL_METRICS_EXEMPLAR_FILTER"


@dataclass(frozen=True)
class MetricsSetup:
    """What :func:`setup_metrics` installed."""

    #: The installed provider; ``None``: metrics are off.
    provider: MeterProvider | None = None
    #: Where the Prometheus text comes from (``prometheus_text``); ``None``: not scraped.
    registry: CollectorRegistry | None = None


_installed: MetricsSetup | None = None


def setup_metrics(*, prometheus: bool = False, service_name: str | None = None) -> MetricsSetup:
    """Install a meter provider as the environment asks, plus a Prometheus reader when
    ``prometheus``. Safe to call more than once: the first set-up stays (OTel allows one
    provider per process)."""
    global _installed
    if _installed is not None:
        return _installed
    if sdk_disabled():
        return MetricsSetup()
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        PeriodicExportingMetricReader,
    )

    readers: list[MetricReader] = []
    for name in exporter_names("metrics"):
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
                OTLPMetricExporter,
            )

            readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        elif name == "console":
            readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter(out=sys.stderr)))
        elif name == "prometheus":
            prometheus = True
        else:
            logger.warning("OTEL_METRICS_EXPORTER=%s is not supported; ignored", name)
    registry = None
    if prometheus:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from prometheus_client import CollectorRegistry

        registry = CollectorRegistry(auto_describe=True)
        readers.append(PrometheusMetricReader(registry=registry))
    if not readers:
        return MetricsSetup()
    provider = MeterProvider(
        metric_readers=readers,
        resource=service_resource(service_name),
        exemplar_filter=_exemplar_filter(),
    )
    metrics.set_meter_provider(provider)
    _installed = MetricsSetup(provider, registry)
    return _installed


def _exemplar_filter() -> ExemplarFilter | None:
    """Exemplars off unless the variable chooses a filter (``None``: the SDK reads it)."""
    if os.environ.get(_EXEMPLAR_FILTER_ENV, "").strip():
        return None
    from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter

    return AlwaysOffExemplarFilter()


def prometheus_registry(provider_readers: list[MetricReader]) -> CollectorRegistry:
    """A private registry fed by a new Prometheus reader appended to ``provider_readers``
    (for a provider built by hand, such as a test's)."""
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry(auto_describe=True)
    provider_readers.append(PrometheusMetricReader(registry=registry))
    return registry


def prometheus_text(registry: CollectorRegistry) -> tuple[bytes, str]:
    """The registry's metrics in the Prometheus text format, and its media type."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(registry), CONTENT_TYPE_LATEST
