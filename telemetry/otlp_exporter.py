"""The OTLP/HTTP span exporter ``trpc-bridge`` installs: the SDK's, encoding with
:func:`trpc_bridge.telemetry.otlp_encode.encode_spans`.

Everything but the encoding is the SDK's ``OTLPSpanExporter``: the ``OTEL_EXPORTER_OTLP_*``
configuration (endpoint, headers, timeout, compression, certificates), its HTTP session,
retries and back-off, logging. The bytes it sends are the bytes the SDK would send.

The SDK has no public way to send bytes it did not encode. Its HTTP client (the private
``_client`` of the release this project installs) does exactly that, so this exporter
uses it when it is there, and otherwise — an older or newer SDK, or the SDK's own export metrics
switched on (``OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED``, which the SDK records around
its encoding) — leaves ``export`` to the SDK unchanged. ``tests/telemetry`` checks that
the installed SDK takes the fast path.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from trpc_bridge.telemetry.otlp_encode import encode_spans

logger = logging.getLogger(__name__)

#: The SDK's switch for metrics about its own exporters.
SDK_METRICS_ENV = "OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED"


class OtlpHttpSpanExporter(OTLPSpanExporter):
    """``OTLPSpanExporter`` with the bridge's span encoder (same arguments, same bytes)."""

    @property
    def encodes_spans(self) -> bool:
        """True when :meth:`export` encodes with the bridge's encoder, False when it leaves
        the batch to the SDK's own ``export``."""
        return (
            callable(getattr(getattr(self, "_client", None), "export", None))
            and os.environ.get(SDK_METRICS_ENV, "").strip().lower() != "true"
        )

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if getattr(self, "_shutdown", False) or not self.encodes_spans:
            return super().export(spans)
        data = encode_spans(spans)
        limit = getattr(self, "_max_request_size", 0)
        if 0 < limit < len(data):
            logger.warning(
                "dropped a batch of %d spans: %d bytes encoded, over the %d-byte request limit",
                len(spans),
                len(data),
                limit,
            )
            return SpanExportResult.FAILURE
        result = self._client.export(data)
        return SpanExportResult.SUCCESS if result.success else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        super().shutdown()  # type: ignore[no-untyped-call]  # the SDK's is not annotated
