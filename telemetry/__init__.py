"""Telemetry: OpenTelemetry setup and W3C trace propagation over JSON-RPC, REST and gRPC."""
