"""The HTTP listener and what guards it before any door runs: body and connection limits,
request-head deadlines, media types."""
