"""Who may come in: authentication and TLS for every door of the bridge server.

One :class:`~trpc_bridge.server.auth.authenticator.AuthGate` per server holds the configured
scheme (:mod:`.oidc`, :mod:`.api_keys`, :mod:`.mtls`, or the trusted ``X-User-ID`` header
of :mod:`.trusted_header`); the HTTP edge (:mod:`.http_edge`) and the gRPC edge
(:mod:`.grpc_edge`) run every request through it before any door sees the request, answer
a refusal in the door's own protocol, and attach the verified
:class:`~trpc_bridge.server.auth.principal.Principal`, from which the runner's identity rule
(``server/identity.py``) takes the caller's user id. :mod:`.tls` builds both ports' TLS;
:mod:`.options` holds the flags (:class:`SecurityOptions`). ``docs/security.md`` has the
threat model.
"""
