"""The bridge's signing keys (card signatures, push-notification JWTs), their rotation,
and the one JWKS that publishes them (``/.well-known/jwks.json``)."""
