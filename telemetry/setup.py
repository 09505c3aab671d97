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
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider

DEFAULT_SERVICE_NAME = "trpc-bridge"

logger = logging.getLogger(__name__)

_installed: TracerProvider | None = None


def _one_line(span: ReadableSpan) -> str:
    line: str = span.to_json(indent=None)
    return line + "\n"


def set_w3c_propagator() -> None:
    """W3C ``traceparent``/``tracestate`` plus ``baggage``: what trpc-agent-go reads."""
    propagate.set_global_textmap(W3C_PROPAGATOR)


def exporter_names() -> list[str]:
    """``OTEL_TRACES_EXPORTER`` as a list; unset means ``otlp`` if an endpoint is set."""
    configured = os.environ.get("OTEL_TRACES_EXPORTER", "").strip()
    if not configured:
        endpoint_set = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
        )
        return ["otlp"] if endpoint_set else []
    names = [name.strip().lower() for name in configured.split(",") if name.strip()]
    return [name for name in names if name != "none"]


def setup_tracing(service_name: str | None = None) -> TracerProvider | None:
    """Install a tracer provider as configured by the environment; ``None`` when off.

    ``service_name`` wins over ``OTEL_SERVICE_NAME``, which wins over ``trpc-bridge``.
    Safe to call more than once: the first provider stays (OTel allows one per process).
    """
    global _installed
    set_w3c_propagator()
    if _installed is not None:
        return _installed
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    names = exporter_names()
    if not names:
        return None

    # The SDK is imported only when tracing is on: off must not pay for it.
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
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

    attributes = {}
    if service_name or not os.environ.get("OTEL_SERVICE_NAME"):
        attributes[SERVICE_NAME] = service_name or DEFAULT_SERVICE_NAME
    provider = TracerProvider(resource=Resource.create(attributes))
    for processor in processors:
        provider.add_span_processor(processor)
    trace.set_tracer_provider(provider)
    _installed = provider
    return provider
