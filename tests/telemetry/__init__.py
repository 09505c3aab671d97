"""Telemetry tests: propagation across real a2a-sdk and bridge peers."""
