"""Process-wide OpenTelemetry set-up from the standard ``OTEL_*`` environment variables.

Tracing is off unless an exporter is configured: with no provider installed the OTel
API stays a no-op and every bridge hook returns after one ``isinstance`` check
(:func:`trpc_bridge.telemetry.spans.tracing_enabled`).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

from opentelemetry import propagate, trace

from trpc_bridge.telemetry.trace_context import W3C_PROPAGATOR

if TYPE_CHECKING:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

DEFAULT_SERVICE_NAME = "trpc-bridge"

logger = logging.getLogger(__name__)

_installed: TracerProvider | None = None


def _one_line(span: ReadableSpan) -> str:
    line: str = span.to_json(indent=None)
    return line + "\n"


def set_w3c_propagator() -> None:
    """W3C ``traceparent``/``tracestate`` plus ``baggage``: what trpc-agent-go reads."""
    propagate.set_global_textmap(W3C_PROPAGATOR)


def service_resource(service_name: str | None = None) -> Resource:
    """The process's resource: ``service_name`` wins over ``OTEL_SERVICE_NAME``, which wins
    over ``trpc-bridge`` (the SDK reads the variable and ``OTEL_RESOURCE_ATTRIBUTES``)."""
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource

    attributes = {}
    if service_name or not os.environ.get("OTEL_SERVICE_NAME"):
        attributes[SERVICE_NAME] = service_name or DEFAULT_SERVICE_NAME
    return Resource.create(attributes)


def exporter_names(signal: str = "traces") -> list[str]:
    """``OTEL_<SIGNAL>_EXPORTER`` as a list; unset means ``otlp`` if an endpoint is set
    (``OTEL_EXPORTER_OTLP_ENDPOINT`` or the signal's own)."""
    configured = os.environ.get(f"OTEL_{signal.upper()}_EXPORTER", "").strip()
    if not configured:
        endpoint_set = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get(
            f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT"
        )
        return ["otlp"] if endpoint_set else []
    names = [name.strip().lower() for name in configured.split(",") if name.strip()]
    return [name for name in names if name != "none"]


def sdk_disabled() -> bool:
    return os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


def setup_tracing(service_name: str | None = None) -> TracerProvider | None:
    """Install a tracer provider as configured by the environment; ``None`` when off.

    ``service_name`` wins over ``OTEL_SERVICE_NAME``, which wins over ``trpc-bridge``.
    Safe to call more than once: the first provider stays (OTel allows one per process).
    """
    global _installed
    set_w3c_propagator()
    if _installed is not None:
        return _installed
    if sdk_disabled():
        return None
    names = exporter_names()
    if not names:
        return None

    # The SDK is imported only when tracing is on: off must not pay for it.
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    processors: list[SpanProcessor] = []
    for name in names:
        if name == "otlp":
            from trpc_bridge.telemetry.otlp_exporter import OtlpHttpSpanExporter

            processors.append(BatchSpanProcessor(OtlpHttpSpanExporter()))
        elif name == "console":
            # Unbatched, so spans show up next to the log lines they belong to; on stderr,
            # so `trpc-bridge call --json` output stays parseable; one JSON line per span,
            # so the output can be filtered line by line (grep, jq).
            exporter = ConsoleSpanExporter(out=sys.stderr, formatter=_one_line)
            processors.append(SimpleSpanProcessor(exporter))
        else:
            logger.warning("OTEL_TRACES_EXPORTER=%s is not supported; ignored", name)
    if not processors:
        return None

    provider = TracerProvider(resource=service_resource(service_name))
    for processor in processors:
        provider.add_span_processor(processor)
    trace.set_tracer_provider(provider)
    _installed = provider
    return provider


def add_span_processor(processor: SpanProcessor) -> TracerProvider | None:
    """Also send every span to ``processor`` (the playground's span buffer), installing a
    tracer provider for it when tracing is otherwise off; ``None`` (nothing added) with
    ``OTEL_SDK_DISABLED=true``."""
    global _installed
    if sdk_disabled():
        return None
    if _installed is None:
        from opentelemetry.sdk.trace import TracerProvider

        set_w3c_propagator()
        _installed = TracerProvider(resource=service_resource())
        trace.set_tracer_provider(_installed)
    _installed.add_span_processor(processor)
    return _installed
