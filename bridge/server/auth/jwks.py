"""The identity provider's signing keys (JWKS), cached.

Keys are fetched once and kept; a token signed with a key the cache does not know makes it
fetch the set again (a rotation), but at most once per ``min_interval`` seconds, so a
stream of tokens with made-up ``kid`` values cannot turn into a stream of requests to
the provider. The whole set is also fetched again after ``max_age`` seconds, so a key the
provider withdrew stops being accepted. Concurrent misses share one fetch. When a fetch
fails the keys fetched last stay in use (and the failure is logged, once per interval).

Only public signing keys are kept: RSA, EC and OKP keys, never a symmetric (``oct``) key,
whose presence in a public document would let anyone sign.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from jwt import PyJWK
from jwt.exceptions import PyJWKError, PyJWTError

logger = logging.getLogger(__name__)

#: Algorithms a key of each type may verify (RFC 7518 §3, RFC 8037).
_RSA = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
_EC = {"P-256": ("ES256",), "P-384": ("ES384",), "P-521": ("ES512",)}
_OKP = {"Ed25519": ("EdDSA",), "Ed448": ("EdDSA",)}


class KeysUnavailable(Exception):
    """No key has ever been fetched, and the provider cannot be reached now."""


def key_algorithms(jwk: dict[str, Any]) -> tuple[str, ...]:
    """The algorithms ``jwk`` may verify: by its type (and curve), narrowed to its own
    ``alg`` when it names one; empty for a key that verifies nothing here."""
    kty, crv = jwk.get("kty"), jwk.get("crv")
    if kty == "RSA":
        allowed: tuple[str, ...] = _RSA
    elif kty == "EC":
        allowed = _EC.get(str(crv), ())
    elif kty == "OKP":
        allowed = _OKP.get(str(crv), ())
    else:  # "oct" and anything unknown
        return ()
    if jwk.get("use", "sig") != "sig":
        return ()
    alg = jwk.get("alg")
    if alg is not None:
        return (alg,) if alg in allowed else ()
    return allowed


class SigningKey:
    """One usable key: the key object and the algorithms it may verify."""

    __slots__ = ("algorithms", "key", "kid")

    def __init__(self, jwk: dict[str, Any], algorithms: tuple[str, ...]) -> None:
        self.kid: str | None = jwk.get("kid")
        self.algorithms = list(algorithms)
        self.key: Any = PyJWK(jwk, algorithms[0]).key


def parse_key_set(document: Any) -> list[SigningKey]:
    """The usable signing keys of a JWKS document (others are skipped)."""
    keys: list[SigningKey] = []
    entries = document.get("keys") if isinstance(document, dict) else None
    for jwk in entries if isinstance(entries, list) else ():
        if not isinstance(jwk, dict):
            continue
        algorithms = key_algorithms(jwk)
        if not algorithms:
            continue
        try:
            keys.append(SigningKey(jwk, algorithms))
        except (PyJWKError, PyJWTError, ValueError, TypeError):
            continue
    return keys


class KeyCache:
    """Signing keys by ``kid``, fetched by ``fetch`` (the JWKS document) as the module
    doc describes."""

    def __init__(
        self,
        fetch: Callable[[], Awaitable[Any]],
        *,
        min_interval: float = 10.0,
        max_age: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self.min_interval = min_interval
        self.max_age = max_age
        self._clock = clock
        self._keys: dict[str | None, SigningKey] | None = None
        self._fetched = -float("inf")  # the last fetch (or attempt)
        self._lock = asyncio.Lock()
        #: Fetches made (for the tests and the bench).
        self.fetches = 0
        #: Changes each time a fetched key set replaces the keys (see ``fresh``).
        self.generation = 0

    def _pick(self, kid: str | None) -> SigningKey | None:
        keys = self._keys or {}
        if kid is not None:
            return keys.get(kid)
        only = list(keys.values())
        return only[0] if len(only) == 1 else None  # no kid: only a lone key is certain

    def fresh(self, generation: int) -> bool:
        """Whether keys of ``generation`` are still the ones in use and younger than
        ``max_age`` (what a verification made with them may be reused for)."""
        return generation == self.generation and self._clock() - self._fetched < self.max_age

    async def find(self, kid: str | None) -> SigningKey | None:
        """The key ``kid`` names (a token without ``kid``: the provider's only key);
        None when the provider does not have it. Raises :class:`KeysUnavailable`."""
        age = self._clock() - self._fetched
        if self._keys is not None and age < self.max_age:
            key = self._pick(kid)
            if key is not None or age < self.min_interval:
                return key
        await self.refresh(since=self._fetched)
        if self._keys is None:
            raise KeysUnavailable
        return self._pick(kid)

    async def refresh(self, *, since: float | None = None) -> None:
        """Fetch the key set, unless another fetch ended after ``since`` (it was shared)."""
        async with self._lock:
            if since is not None and self._fetched != since:
                return
            self._fetched = self._clock()
            self.fetches += 1
            try:
                keys = parse_key_set(await self._fetch())
            except Exception as exc:
                logger.warning("cannot fetch the identity provider's keys: %s", _reason(exc))
                return
            if not keys:
                logger.warning("the identity provider's key set holds no usable signing key")
            self._keys = {key.kid: key for key in keys}
            self.generation += 1


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"[:200]
