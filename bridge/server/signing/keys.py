"""The bridge's signing keys: loaded from a PEM file or generated, each with the JWS
algorithm its type implies and a ``kid`` that is its RFC 7638 thumbprint.

A key's algorithm follows from the key, never from input: RSA signs ``RS256``, EC P-256
``ES256``, P-384 ``ES384``, P-521 ``ES512``, Ed25519 ``EdDSA``. Anything else (DSA, a
public key, a certificate, a short RSA key) is refused when it is loaded, with a message
that names the file and never its content. The thumbprint makes ``kid`` the same on every
replica that loads the same file, and different for every other key.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey

#: RSA keys shorter than this are refused (NIST's floor since 2015).
MIN_RSA_BITS = 2048
_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
#: The members of each key type that RFC 7638 hashes, in its lexicographic order.
_THUMBPRINT_MEMBERS = {
    "RSA": ("e", "kty", "n"),
    "EC": ("crv", "kty", "x", "y"),
    "OKP": ("crv", "kty", "x"),
}


class SigningKeyError(ValueError):
    """A signing key that cannot be used; the message names the file, never its bytes."""


def _algorithm(key: Any) -> str:
    if isinstance(key, rsa.RSAPrivateKey):
        if key.key_size < MIN_RSA_BITS:
            raise SigningKeyError(f"an RSA key of {key.key_size} bits (at least {MIN_RSA_BITS})")
        return "RS256"
    if isinstance(key, ec.EllipticCurvePrivateKey):
        algorithm = _EC_ALGORITHMS.get(key.curve.name)
        if algorithm is None:
            raise SigningKeyError(f"an EC key on curve {key.curve.name} (P-256, P-384 or P-521)")
        return algorithm
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    raise SigningKeyError(f"a {type(key).__name__} (RSA, EC or Ed25519 private keys only)")


def public_jwk(key: PrivateKey) -> dict[str, Any]:
    """The public half of ``key`` as a JWK (no ``kid``, ``alg`` or ``use`` yet)."""
    public = key.public_key()
    if isinstance(public, rsa.RSAPublicKey):
        jwk = RSAAlgorithm.to_jwk(public, as_dict=True)
    elif isinstance(public, ec.EllipticCurvePublicKey):
        jwk = ECAlgorithm.to_jwk(public, as_dict=True)
    else:
        jwk = OKPAlgorithm.to_jwk(public, as_dict=True)
    return dict(jwk)


def thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638: base64url SHA-256 of the key's required members as compact sorted JSON."""
    members = {name: jwk[name] for name in _THUMBPRINT_MEMBERS[jwk["kty"]]}
    digest = hashlib.sha256(json.dumps(members, separators=(",", ":")).encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass(frozen=True)
class SigningKey:
    """A private key with its algorithm and ``kid``."""

    private: PrivateKey
    algorithm: str
    kid: str

    @classmethod
    def of(cls, private: PrivateKey) -> SigningKey:
        algorithm = _algorithm(private)
        return cls(private, algorithm, thumbprint(public_jwk(private)))

    @classmethod
    def generate(cls) -> SigningKey:
        """A fresh EC P-256 key (``ES256``: small signatures, fast to make)."""
        return cls.of(ec.generate_private_key(ec.SECP256R1()))

    def public(self) -> dict[str, Any]:
        """The JWKS entry: the public JWK with ``kid``, ``alg`` and ``use: sig``."""
        return {**public_jwk(self.private), "kid": self.kid, "alg": self.algorithm, "use": "sig"}


def load_signing_key(path: str | Path) -> SigningKey:
    """The unencrypted PEM private key in ``path``. Raises :class:`SigningKeyError`."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SigningKeyError(f"cannot read signing key {path}: {exc.strerror}") from None
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise SigningKeyError(
            f"{path} holds no unencrypted PEM private key (RSA, EC or Ed25519)"
        ) from None
    try:
        return SigningKey.of(private)  # type: ignore[arg-type]
    except SigningKeyError as exc:
        raise SigningKeyError(f"{path} holds {exc}") from None
