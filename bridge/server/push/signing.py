"""Signed push notifications: a JWT with every webhook delivery, verifiable with the
bridge's JWKS (``/.well-known/jwks.json``), as the A2A specification recommends for
webhook authenticity — besides the per-config token, which only says "the config's
owner registered this URL".

The token travels in ``X-A2A-Notification-JWT`` on every delivery, and also as
``Authorization: Bearer`` when the config brings no ``authentication`` of its own (the
header trpc-a2a-go's push receivers read). Its protected header names the key (``kid``)
and algorithm; its claims:

- ``iss``: the bridge's base URL; ``aud``: the webhook URL it was sent to (a receiver
  refuses a token replayed from another webhook);
- ``iat`` / ``exp``: when it was made, and :data:`TOKEN_LIFETIME` seconds later (each
  retry is signed anew);
- ``jti``: unique per delivery attempt (a receiver may refuse a replay);
- ``task_id``: the task the update belongs to;
- ``request_body_sha256``: the hex SHA-256 of the exact body bytes (trpc-a2a-go's claim
  name), so the token vouches for this body and no other.

A receiver fetches the JWKS, checks the signature with the key named by ``kid`` (only
the algorithms it expects: never ``none`` or HMAC), ``iss``, ``aud``, ``exp``, then hashes
the raw body and compares. ``docs/security.md`` has the recipe.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable

import jwt

from trpc_bridge.server.signing.key_ring import KeyRing

JWT_HEADER = "X-A2A-Notification-JWT"
#: Seconds a push token is valid: long enough for a slow receiver, short for a replay.
TOKEN_LIFETIME = 300
#: The receivers' clock leeway the JWKS allows for: a retired key stays published for
#: ``TOKEN_LIFETIME + CLOCK_LEEWAY`` seconds after it signed its last token.
CLOCK_LEEWAY = 60
BODY_HASH_CLAIM = "request_body_sha256"


class PushSigner:
    """Signs deliveries with the current key of ``keys``; ``issuer``: the bridge's base
    URL, read when signing (the port is known only once the server listens)."""

    def __init__(
        self, keys: KeyRing, issuer: Callable[[], str], *, clock: Callable[[], float] = time.time
    ) -> None:
        self.keys = keys
        self._issuer = issuer
        self._clock = clock

    def token(self, *, url: str, task_id: str, body: bytes) -> str:
        key = self.keys.current()
        now = int(self._clock())
        claims = {
            "iss": self._issuer(),
            "aud": url,
            "iat": now,
            "exp": now + TOKEN_LIFETIME,
            "jti": os.urandom(16).hex(),
            "task_id": task_id,
            BODY_HASH_CLAIM: hashlib.sha256(body).hexdigest(),
        }
        return jwt.encode(
            claims, key.private, algorithm=key.algorithm, headers={"kid": key.kid, "typ": "JWT"}
        )
