"""Each test gets its own SDK tracer provider with an in-memory exporter, passed
explicitly to the bridge's hooks: nothing global is installed, so tests stay independent."""

from __future__ import annotations

import pytest
from span_capture import Tracing, in_memory_tracing

from trpc_bridge.telemetry.setup import set_w3c_propagator


@pytest.fixture
def tracing() -> Tracing:
    set_w3c_propagator()
    return in_memory_tracing()
