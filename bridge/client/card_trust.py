"""Checking an agent card's signature (A2A 1.0 §8.4) before the client uses the card.

The keys come from the caller, never from the card: a pinned key (``--card-key FILE``:
a PEM public key or certificate, a JWK, or a JWK Set) or a JWKS URL the caller trusts
(``--card-jwks URL``, fetched when the card is checked). A ``jku`` the card names is
ignored: whoever can change the card can change its ``jku`` too.

The check is a2a-sdk's verifier (``a2a.utils.signing.create_signature_verifier``): the
card is parsed as a2a-sdk parses it (the 0.3 fields dropped), canonicalised (RFC 8785,
``signatures`` excluded) and at least one signature must verify, with an asymmetric
algorithm only (never ``none`` or HMAC: a public key must not become an HMAC secret). A
card without a signature, with a broken one, or signed by another key is refused with
a :class:`~trpc_bridge.client.card.RemoteAgentError` that says which.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jwt
from a2a.client.card_resolver import parse_agent_card
from a2a.utils.signing import (
    InvalidSignaturesError,
    NoSignatureError,
    SignatureVerificationError,
    create_signature_verifier,
)
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from google.protobuf.json_format import ParseError
from jwt import PyJWK
from jwt.exceptions import InvalidKeyError

from trpc_bridge.client.card import ResolvedCard
from trpc_bridge.client.errors import RemoteAgentError

#: What a card may be signed with: asymmetric JWS algorithms.
ALGORITHMS = [
    *("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"),
    *("ES256", "ES384", "ES512", "EdDSA"),
]


def _pem_key(data: bytes) -> PyJWK:
    """A PEM public key or certificate as a JWK."""
    if b"CERTIFICATE" in data:
        public: Any = x509.load_pem_x509_certificate(data).public_key()
    else:
        public = serialization.load_pem_public_key(data)
    for algorithm in ("RS256", "ES256", "EdDSA"):
        try:
            jwk = jwt.get_algorithm_by_name(algorithm).to_jwk(public, as_dict=True)
        except (InvalidKeyError, TypeError, ValueError, AttributeError):
            continue
        return PyJWK(dict(jwk))
    raise ValueError("not an RSA, EC or Ed25519 public key")


def _jwks(data: Any) -> list[PyJWK]:
    entries = data.get("keys") if isinstance(data, dict) and "keys" in data else [data]
    if not isinstance(entries, list):
        raise ValueError("a JWK Set's keys must be a list")
    keys = []
    for entry in entries:
        if (
            isinstance(entry, dict)
            and entry.get("kty") in ("RSA", "EC", "OKP")  # never a shared (oct) secret
            and "d" not in entry
            and entry.get("use", "sig") == "sig"
        ):
            keys.append(PyJWK(entry))
    if not keys:
        raise ValueError("no public signing key in it")
    return keys


@dataclass(frozen=True)
class CardTrust:
    """The keys a card must be signed with: ``keys`` pinned, and/or the JWK Set at
    ``jwks_url``."""

    keys: Sequence[PyJWK] = field(default_factory=tuple)
    jwks_url: str = ""

    @classmethod
    def from_file(cls, path: str | Path) -> CardTrust:
        """A PEM public key or certificate, a JWK or a JWK Set (JSON). Raises
        :class:`RemoteAgentError` when the file holds none of them."""
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise RemoteAgentError(f"cannot read card key {path}: {exc.strerror}") from None
        if b"PRIVATE KEY" in data or b'"d"' in data:
            raise RemoteAgentError(
                f"{path} holds a private key: a card key is the signer's public key"
            )
        try:
            if data.lstrip().startswith(b"-----BEGIN"):
                return cls(keys=(_pem_key(data),))
            return cls(keys=tuple(_jwks(json.loads(data))))
        except (ValueError, jwt.PyJWTError):
            raise RemoteAgentError(
                f"{path} holds no usable card key (a PEM public key or certificate, "
                "a JWK or a JWK Set of RSA, EC or Ed25519 keys)"
            ) from None

    async def _keys(self, http: httpx.AsyncClient) -> list[PyJWK]:
        keys = list(self.keys)
        if self.jwks_url:
            try:
                response = await http.get(self.jwks_url)
                response.raise_for_status()
                keys.extend(_jwks(response.json()))
            except (httpx.HTTPError, ValueError, jwt.PyJWTError) as exc:
                raise RemoteAgentError(
                    f"cannot read the card keys at {self.jwks_url}: {exc or type(exc).__name__}"
                ) from None
        return keys

    async def verify(self, http: httpx.AsyncClient, card: ResolvedCard, source: str) -> None:
        """Raises :class:`RemoteAgentError` unless a signature on ``card`` (fetched from
        ``source``) verifies with one of the trusted keys."""
        keys = await self._keys(http)
        by_kid = {key.key_id: key for key in keys if key.key_id}

        def key_for(kid: str | None, jku: str | None) -> PyJWK:
            if kid and kid in by_kid:
                return by_kid[kid]
            if len(keys) == 1 and not self.jwks_url:
                return keys[0]  # one pinned key: whatever the card calls it
            raise InvalidKeyError(f"no trusted key {kid!r}")

        try:
            sdk_card = parse_agent_card(copy.deepcopy(card.raw))
            create_signature_verifier(key_for, ALGORITHMS)(sdk_card)
        except NoSignatureError:
            raise RemoteAgentError(
                f"the agent card at {source} is not signed, and a signed card was required"
            ) from None
        except (InvalidSignaturesError, SignatureVerificationError):
            raise RemoteAgentError(
                f"the agent card at {source} has no signature that verifies with the "
                f"trusted keys ({_kids(sdk_card)}): refused"
            ) from None
        except (ParseError, ValueError) as exc:
            raise RemoteAgentError(f"unusable agent card at {source}: {exc}") from None


def _kids(card: Any) -> str:
    named = []
    for signature in card.signatures:
        try:
            named.append(str(jwt.get_unverified_header(f"{signature.protected}..").get("kid")))
        except jwt.PyJWTError:
            named.append("unreadable")
    return "signed by kid " + ", ".join(named) if named else "no signature"
