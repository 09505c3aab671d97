"""The served agent card, signed (A2A 1.0 §8.4): a JWS over the card's RFC 8785
canonical JSON, made by a2a-sdk's signer (``a2a.utils.signing``), so any a2a-sdk client
verifies it with ``create_signature_verifier``.

The protected header carries ``alg`` (from the key), ``typ: JOSE``, ``kid`` (the key's
thumbprint) and ``jku``: the bridge's JWKS (``/.well-known/jwks.json``), which publishes
the key. A verifier should still take the key from a source it trusts (a pinned key, or
a JWKS URL it was configured with), never from a ``jku`` the card itself names.

Each form of the card the bridge serves is a different card (with and without its gRPC
interfaces, the extended card), so each is signed on its own. The 0.3 fields a2a-sdk
adds when rendering a card for 0.3 callers are not signed: a verifier parses the card
(``parse_agent_card`` drops them) before it canonicalises.
"""

from __future__ import annotations

from a2a.types import AgentCard
from a2a.utils.signing import ProtectedHeader, create_agent_card_signer
from cryptography.hazmat.primitives import serialization

from trpc_bridge.server.signing.keys import SigningKey


def sign_card(card: AgentCard, key: SigningKey, *, jku: str) -> AgentCard:
    """``card`` with its one signature (made now; any earlier one is replaced)."""
    del card.signatures[:]
    pem = key.private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    header = ProtectedHeader(kid=key.kid, alg=key.algorithm, jku=jku, typ="JOSE")
    return create_agent_card_signer(pem, header)(card)
