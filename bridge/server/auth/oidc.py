"""``--auth oidc --oidc-issuer URL [--audience A] [--user-claim sub]``: JWT bearer tokens
verified against an OpenID provider.

The provider's discovery document (``<issuer>/.well-known/openid-configuration``) names
its ``issuer`` (which must be exactly the configured one) and its ``jwks_uri``; the keys
are cached (:mod:`.jwks`). A token is accepted when PyJWT verifies its signature with the
key its ``kid`` names, using an algorithm that key may verify (RS*, PS*, ES*, EdDSA: never
``none``, never an HMAC, whatever the token's header says), its ``exp`` is in the future
and its ``nbf`` (if any) in the past, with :data:`LEEWAY` seconds of clock skew, its
``iss`` is the issuer and, with ``--audience``, its ``aud`` holds the audience. The user
id is the ``--user-claim`` claim (``sub`` by default).

The issuer must be ``https``; plain ``http`` is accepted for a loopback issuer only (a
provider on the same machine, as in development and the tests).

A client sends the same access token with every request until it expires, so a verified
token is remembered (at most :data:`REMEMBERED` of them) until its ``exp``, and only
while the keys it was verified with are still the current ones and younger than the key
cache's maximum age: a withdrawn key stops being accepted as soon as it would without the
memory. A signature check costs ~60 µs (RS256); a remembered token, a dict lookup
(``bench/auth.py``).
"""

from __future__ import annotations

import ssl
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import jwt
from jwt.exceptions import (
    DecodeError,
    ExpiredSignatureError,
    ImmatureSignatureError,
    InvalidAlgorithmError,
    InvalidAudienceError,
    InvalidIssuedAtError,
    InvalidIssuerError,
    InvalidJTIError,
    InvalidSignatureError,
    InvalidSubjectError,
    MissingRequiredClaimError,
    PyJWTError,
)
from jwt.types import Options

from trpc_bridge.addresses import is_loopback
from trpc_bridge.server.auth.authenticator import bearer_challenge, bearer_token, checked_user_id
from trpc_bridge.server.auth.errors import Unauthenticated, Unavailable
from trpc_bridge.server.auth.jwks import KeyCache, KeysUnavailable
from trpc_bridge.server.auth.presented import Presented
from trpc_bridge.server.auth.principal import Principal, Scheme

#: Seconds of clock skew allowed on ``exp`` and ``nbf``.
LEEWAY = 30
#: Longer tokens are refused unread (a JWT of a few claims is well under 2 KB).
MAX_TOKEN_BYTES = 16 * 1024
DISCOVERY_PATH = "/.well-known/openid-configuration"
#: Verified tokens remembered at most (then the memory starts again, empty).
REMEMBERED = 4096


class OidcConfigError(ValueError):
    """The issuer cannot be used (one line)."""


def check_issuer(issuer: str) -> str:
    """``issuer`` if it may be trusted for tokens; raises :class:`OidcConfigError`."""
    parts = urlsplit(issuer)
    if parts.scheme == "https" and parts.hostname:
        return issuer
    if parts.scheme == "http" and parts.hostname and is_loopback(parts.hostname):
        return issuer
    raise OidcConfigError(
        f"--oidc-issuer {issuer!r}: an https URL is required (http only on loopback)"
    )


def discovery_url(issuer: str) -> str:
    return issuer.rstrip("/") + DISCOVERY_PATH


#: PyJWT's refusals, as what the caller is told (nothing of the token itself).
_REFUSALS: tuple[tuple[type[PyJWTError], str], ...] = (
    (ExpiredSignatureError, "the token has expired"),
    (ImmatureSignatureError, "the token is not valid yet"),
    (InvalidAudienceError, "the token is not for this audience"),
    (InvalidIssuerError, "the token is not from the configured issuer"),
    (InvalidSignatureError, "the token's signature is not valid"),
    (InvalidAlgorithmError, "the token's algorithm is not accepted"),
    (MissingRequiredClaimError, "the token lacks a required claim"),
    (InvalidSubjectError, "the token's subject (sub) is not a string"),
    (InvalidIssuedAtError, "the token's issue time (iat) is not valid"),
    (InvalidJTIError, "the token's id (jti) is not a string"),
    (DecodeError, "the token is not a valid JWT"),
)


def _refusal(exc: PyJWTError) -> str:
    for kind, message in _REFUSALS:
        if isinstance(exc, kind):
            return message
    return "the token is not valid"


class OidcVerifier:
    scheme = Scheme.OIDC

    def __init__(
        self,
        issuer: str,
        *,
        audience: str = "",
        user_claim: str = "sub",
        ca_file: str = "",
        min_refetch: float = 10.0,
        max_key_age: float = 600.0,
    ) -> None:
        self.issuer = check_issuer(issuer)
        self.audience = audience
        self.user_claim = user_claim
        verify: ssl.SSLContext | bool = True
        if ca_file:
            verify = ssl.create_default_context(cafile=ca_file)
        self._http = httpx.AsyncClient(verify=verify, timeout=5.0, follow_redirects=False)
        self._jwks_uri = ""
        self.keys = KeyCache(self._fetch_keys, min_interval=min_refetch, max_age=max_key_age)
        #: token → (its exp, the key generation it was verified with, the principal)
        self._verified: dict[str, tuple[float, int, Principal]] = {}
        self._options: Options = {"require": ["exp", "iss"], "verify_aud": bool(audience)}

    async def _get_json(self, url: str) -> Any:
        response = await self._http.get(url, headers={"Accept": "application/json"})
        response.raise_for_status()
        return response.json()

    async def _fetch_keys(self) -> Any:
        if not self._jwks_uri:
            document = await self._get_json(discovery_url(self.issuer))
            if not isinstance(document, dict) or document.get("issuer") != self.issuer:
                raise ValueError("the discovery document names another issuer")
            jwks_uri = document.get("jwks_uri")
            if not isinstance(jwks_uri, str) or not jwks_uri:
                raise ValueError("the discovery document has no jwks_uri")
            self._jwks_uri = jwks_uri
        return await self._get_json(self._jwks_uri)

    async def start(self) -> None:
        await self.keys.refresh()  # a failure is logged; tokens are tried again later

    async def close(self) -> None:
        await self._http.aclose()

    async def verify(self, token: str) -> dict[str, Any]:
        """The token's verified claims; raises :class:`Unauthenticated` or
        :class:`Unavailable`."""
        if len(token) > MAX_TOKEN_BYTES:
            raise Unauthenticated("the token is too long")
        try:
            header = jwt.get_unverified_header(token)
        except PyJWTError:
            raise Unauthenticated("the token is not a valid JWT") from None
        try:  # PyJWT has checked that a kid, if any, is a string
            key = await self.keys.find(header.get("kid"))
        except KeysUnavailable:
            raise Unavailable("the identity provider's keys cannot be fetched") from None
        if key is None:
            raise Unauthenticated("the token is signed with a key the issuer does not publish")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=key.algorithms,
                audience=self.audience or None,
                issuer=self.issuer,
                leeway=LEEWAY,
                options=self._options,
            )
        except PyJWTError as exc:
            raise Unauthenticated(_refusal(exc)) from None
        return claims

    async def authenticate(self, presented: Presented) -> Principal:
        token = bearer_token(presented)
        remembered = self._verified.get(token)
        if remembered is not None:
            expires, generation, principal = remembered
            if time.time() < expires and self.keys.fresh(generation):
                return principal
            del self._verified[token]
        generation = self.keys.generation
        claims = await self.verify(token)
        user_id = claims.get(self.user_claim)
        if not isinstance(user_id, str):
            user_id = ""
        user_id = checked_user_id(user_id, f"token's {self.user_claim} claim")
        principal = Principal(user_id, self.scheme, token)
        if generation == self.keys.generation:  # not verified with keys fetched meanwhile
            if len(self._verified) >= REMEMBERED:
                self._verified.clear()
            self._verified[token] = (float(claims["exp"]), generation, principal)
        return principal

    def challenge(self, refusal: Unauthenticated) -> str:
        return bearer_challenge(refusal)
