"""Running the bridge as a service: health and readiness probes (HTTP and the standard
gRPC health service), the access log and request metrics on both ports, the separate
metrics port, and the playground's trace view (the span buffer's routes). What an
operator sees is listed in ``docs/operations.md``."""
