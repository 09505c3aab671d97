"""Switch for a2a-sdk's own per-call spans, which are off in the bridge by default.

a2a-sdk decorates its dispatchers, request handler, queues and transports with spans
and reads ``OTEL_INSTRUMENTATION_A2A_SDK_ENABLED`` once, when ``a2a.utils.telemetry`` is
imported (unset means on). One streaming request then produces 50+ spans, mostly queue
internals, which costs throughput and buries the bridge's ``invoke_agent`` spans. The
variable must therefore be decided before anything imports ``a2a``; this module imports
nothing heavy so that it can run first.
"""

from __future__ import annotations

import logging
import os
import sys

SDK_SPANS_ENV = "OTEL_INSTRUMENTATION_A2A_SDK_ENABLED"

_A2A_TELEMETRY_MODULE = "a2a.utils.telemetry"

logger = logging.getLogger(__name__)


def configure_sdk_spans(enabled: bool | None = None) -> bool:
    """Turn a2a-sdk's spans on or off; ``None`` keeps the env var if set, else off.

    Returns the effective setting. If ``a2a`` was already imported with a different
    setting, the change cannot take effect in this process: that is logged, not raised,
    because tracing must never stop the bridge from serving.
    """
    if enabled is None:
        value = os.environ.setdefault(SDK_SPANS_ENV, "false")
    else:
        value = os.environ[SDK_SPANS_ENV] = "true" if enabled else "false"
    effective = value.strip().lower() == "true"
    loaded = sys.modules.get(_A2A_TELEMETRY_MODULE)
    if loaded is not None and getattr(loaded, "otel_enabled", effective) != effective:
        logger.warning(
            "a2a-sdk was imported before %s=%s was set; its spans stay %s in this process",
            SDK_SPANS_ENV,
            value,
            "on" if not effective else "off",
        )
    return effective
