"""An SDK tracer provider with an in-memory exporter, and a way to wait for late spans."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@dataclass
class Tracing:
    provider: TracerProvider
    exporter: InMemorySpanExporter

    async def wait_for(
        self, predicate: Callable[[Sequence[ReadableSpan]], bool]
    ) -> Sequence[ReadableSpan]:
        """The finished spans once ``predicate`` holds. A server span ends when the ASGI
        app or gRPC handler returns, which can be just after the client saw the last
        event; give it up to a few event-loop turns (a safety net, not a timing check)."""
        for _ in range(500):
            spans = self.exporter.get_finished_spans()
            if predicate(spans):
                return spans
            await asyncio.sleep(0.01)
        return self.exporter.get_finished_spans()


def in_memory_tracing() -> Tracing:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Tracing(provider, exporter)
