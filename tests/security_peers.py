"""Real security counterparts for the tests: certificates made by ``trustme`` and an
OpenID provider (npm ``oidc-provider``, ``tests/oidc_node``) started on loopback.

Reusable by any test that needs a credential (inbound authentication, outbound tokens,
signed cards and pushes)::

    pki = Pki.make(tmp_path)                     # a CA, the server's cert, client certs
    pki.client("spiffe://example.org/alice")     # a client certificate naming alice
    with OidcPeer.start(audience="https://bridge.test") as idp:
        token = idp.token("alice")               # client credentials: a real access token
        forged = idp.sign({"sub": "bob", ...})   # the provider's own key, any claims
        idp.rotate()                             # a new signing key, old one still published

The provider's keys are made here and handed to it, so a test can also sign tokens the
provider never issued (expired, wrong audience, …) with a key the provider publishes.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

HERE = Path(__file__).resolve().parent
OIDC_NODE = HERE / "oidc_node"


# --- certificates -----------------------------------------------------------------------


@dataclass(frozen=True)
class ClientCert:
    """A client certificate and its key, as PEM files (``cert``, ``key``) and bytes."""

    cert: Path
    key: Path

    @property
    def cert_pem(self) -> bytes:
        return self.cert.read_bytes()

    @property
    def key_pem(self) -> bytes:
        return self.key.read_bytes()


@dataclass
class Pki:
    """A CA (``ca_pem``), a server certificate for 127.0.0.1 / localhost signed by it
    (``server_cert``, ``server_key``), and client certificates on demand. ``other`` is a
    second, unrelated CA, for certificates the server must not accept."""

    root: Path
    ca: trustme.CA
    other: trustme.CA
    ca_pem: Path
    server_cert: Path
    server_key: Path
    _made: dict[str, ClientCert] = field(default_factory=dict)

    @classmethod
    def make(cls, root: Path) -> Pki:
        root.mkdir(parents=True, exist_ok=True)
        ca, other = trustme.CA(), trustme.CA()
        ca_pem = root / "ca.pem"
        ca.cert_pem.write_to_path(str(ca_pem))
        server = ca.issue_cert("127.0.0.1", "localhost")
        server_cert, server_key = root / "server.pem", root / "server.key"
        # The chain (leaf first): clients that trust only the CA can verify it.
        server_cert.write_bytes(b"".join(blob.bytes() for blob in server.cert_chain_pems))
        server.private_key_pem.write_to_path(str(server_key))
        return cls(root, ca, other, ca_pem, server_cert, server_key)

    def client(self, *identities: str, other_ca: bool = False, common_name: str = "") -> ClientCert:
        """A client certificate naming ``identities`` (subject alternative names: a URI
        when it has ``://`` — a SPIFFE id —, an e-mail address when it has ``@``, else a
        DNS name) and ``common_name``, signed by the CA or by ``other``."""
        key = f"{'other' if other_ca else 'ca'}:{common_name}:{','.join(identities)}"
        if key not in self._made:
            stem = self.root / f"client-{len(self._made)}"
            cert, private = stem.with_suffix(".pem"), stem.with_suffix(".key")
            pem, key_pem = _issue(self.other if other_ca else self.ca, identities, common_name)
            cert.write_bytes(pem)
            private.write_bytes(key_pem)
            self._made[key] = ClientCert(cert, private)
        return self._made[key]


def _issue(ca: trustme.CA, identities: tuple[str, ...], common_name: str) -> tuple[bytes, bytes]:
    """A client certificate signed by ``ca`` (trustme writes no URI names: built here)."""
    issuer = x509.load_pem_x509_certificate(ca.cert_pem.bytes())
    signer: Any = serialization.load_pem_private_key(ca.private_key_pem.bytes(), None)
    private = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [
        x509.UniformResourceIdentifier(i)
        if "://" in i
        else x509.RFC822Name(i)
        if "@" in i
        else x509.DNSName(i)
        for i in identities
    ]
    subject = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, common_name)] if common_name else []
    )
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer.subject)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    certificate = builder.sign(signer, hashes.SHA256())
    key_pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key_pem


# --- the OpenID provider ----------------------------------------------------------------


def oidc_unavailable() -> str:
    """Why the OpenID provider cannot run here; empty when it can."""
    if shutil.which("node") is None:
        return "node is not installed (the OpenID provider is npm's oidc-provider)"
    if not (OIDC_NODE / "node_modules" / "oidc-provider").is_dir():
        return "run `make tests/oidc_node/node_modules` (npm ci) first"
    return ""


@dataclass(frozen=True)
class SigningKey:
    """A private key and its public JWK (``kid``, ``alg``)."""

    kid: str
    alg: str
    private: Any

    def private_jwk(self) -> dict[str, Any]:
        return {
            **_algorithm(self.alg).to_jwk(self.private, as_dict=True),
            "kid": self.kid,
            "alg": self.alg,
            "use": "sig",
        }

    def public_jwk(self) -> dict[str, Any]:
        public = _algorithm(self.alg).to_jwk(self.private.public_key(), as_dict=True)
        return {**public, "kid": self.kid, "alg": self.alg, "use": "sig"}


def _algorithm(alg: str) -> Any:
    if alg.startswith(("RS", "PS")):
        return RSAAlgorithm
    if alg.startswith("ES"):
        return ECAlgorithm
    return OKPAlgorithm


def new_key(alg: str = "RS256") -> SigningKey:
    """A fresh signing key for ``alg`` (RS256, ES256 or EdDSA)."""
    if alg.startswith(("RS", "PS")):
        private: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    elif alg == "ES256":
        private = ec.generate_private_key(ec.SECP256R1())
    else:
        private = ed25519.Ed25519PrivateKey.generate()
    return SigningKey(f"{alg.lower()}-{uuid.uuid4().hex[:8]}", alg, private)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class OidcPeer:
    """``oidc-provider`` on a free loopback port (see the module doc). ``clients`` are
    client-credentials clients whose id is also the token's ``sub``; their secret is
    ``<id>-secret``."""

    def __init__(
        self, process: subprocess.Popen[str], issuer: str, audience: str, keys: list[SigningKey]
    ) -> None:
        self.process = process
        self.issuer = issuer
        self.audience = audience
        self.keys = keys

    @classmethod
    @contextlib.contextmanager
    def start(
        cls,
        *,
        audience: str = "https://bridge.test/agent",
        clients: tuple[str, ...] = ("alice", "bob"),
        keys: list[SigningKey] | None = None,
    ) -> Iterator[OidcPeer]:
        if reason := oidc_unavailable():
            pytest.skip(reason)
        keys = keys or [new_key("RS256")]
        config = {
            "audience": audience,
            "clients": [{"id": c, "secret": f"{c}-secret"} for c in clients],
            "keys": [k.private_jwk() for k in keys],
        }
        process = subprocess.Popen(
            ["node", str(OIDC_NODE / "provider.mjs")],
            cwd=OIDC_NODE,
            env={**os.environ, "OIDC_PEER_CONFIG": json.dumps(config)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            if not line:
                raise RuntimeError("the OpenID provider did not start")
            yield cls(process, json.loads(line)["issuer"], audience, keys)
        finally:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    @property
    def jwks_url(self) -> str:
        return f"{self.issuer}/jwks"

    def token(self, client: str = "alice") -> str:
        """A real access token for ``client`` (client-credentials grant)."""
        response = httpx.post(
            f"{self.issuer}/token",
            data={"grant_type": "client_credentials", "scope": "agent", "resource": self.audience},
            auth=(client, f"{client}-secret"),
        )
        response.raise_for_status()
        return str(response.json()["access_token"])

    def claims(self, subject: str = "alice", **overrides: Any) -> dict[str, Any]:
        """The claims of a valid token for ``subject`` (now, 5 minutes), with overrides;
        a value of None removes the claim."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": subject,
            "aud": self.audience,
            "iat": now,
            "exp": now + 300,
            "jti": uuid.uuid4().hex,
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def sign(
        self,
        claims: dict[str, Any],
        *,
        key: SigningKey | None = None,
        headers: dict[str, Any] | None = None,
    ) -> str:
        """``claims`` signed with one of the provider's keys (by default its signing key)."""
        key = key or self.keys[0]
        return jwt.encode(
            claims, key.private, algorithm=key.alg, headers={"kid": key.kid, **(headers or {})}
        )

    def rotate(self, keys: list[SigningKey]) -> None:
        """Serve ``keys`` from now on (the first signs); same issuer and port."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"keys": [k.private_jwk() for k in keys]}) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        assert answer == "rotated", answer
        self.keys = keys
