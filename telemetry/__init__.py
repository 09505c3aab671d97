"""Telemetry: OpenTelemetry setup and W3C trace propagation over JSON-RPC, REST and gRPC.

Modules (the runtime imports what it needs; codecs never import telemetry):

- :mod:`trpc_bridge.telemetry.setup` — :func:`setup_tracing` from ``OTEL_*`` env vars.
- :mod:`trpc_bridge.telemetry.sdk_spans` — :func:`configure_sdk_spans`: a2a-sdk's own
  spans, off by default; must run before ``a2a`` is imported.
- :mod:`trpc_bridge.telemetry.spans` — span names, attributes, the cheap on/off check.
- :mod:`trpc_bridge.telemetry.client` — ``invoke_agent`` CLIENT span, the a2a-sdk client
  interceptor, ``inject_headers``.
- :mod:`trpc_bridge.telemetry.server` — ASGI middleware and gRPC interceptor that extract
  the caller's context and open the SERVER span.
- :mod:`trpc_bridge.telemetry.tools` — ``execute_tool`` spans from tool events.

This package module imports nothing so that ``sdk_spans`` can run before ``a2a`` loads.
"""
