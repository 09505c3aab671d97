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

The key comes from a :class:`~trpc_bridge.server.signing.key_ring.KeyRing` reading the
key file, so replacing the file rotates it without a restart, by the ring's rule: the
new key is in the JWKS at once and signs the cards ``publish_ahead`` seconds later.
:class:`SignedCards` signs every form again when the ring's key changes, and only then.
"""

from __future__ import annotations

from a2a.types import AgentCard
from a2a.utils.signing import ProtectedHeader, create_agent_card_signer
from cryptography.hazmat.primitives import serialization

from trpc_bridge.server.a2a.card import CardForms
from trpc_bridge.server.signing.key_ring import KeyRing
from trpc_bridge.server.signing.keys import SigningKey

#: Seconds a retired card key stays in the JWKS. A card signature does not expire, so
#: there is no token lifetime to follow: what must still verify is a card signed just
#: before the rotation, held in a cache (answers say ``max-age`` 300 s) or by a client
#: that checks it against a JWKS it fetches later. An hour covers those with a wide
#: margin, and keeps a retired key (perhaps retired because it leaked) trusted by JWKS
#: readers for no longer than that.
CARD_KEY_KEPT = 3600.0


def sign_card(card: AgentCard, key: SigningKey, *, jku: str) -> AgentCard:
    """A copy of ``card`` with one signature, made now (any earlier one is dropped)."""
    signed = AgentCard()
    signed.CopyFrom(card)
    del signed.signatures[:]
    pem = key.private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    header = ProtectedHeader(kid=key.kid, alg=key.algorithm, jku=jku, typ="JOSE")
    return create_agent_card_signer(pem, header)(signed)


class SignedCards:
    """``forms`` signed with the ring's current key: called for every card request, it
    signs again only when the key has changed (a rotation), never per request."""

    def __init__(self, forms: CardForms, keys: KeyRing, *, jku: str) -> None:
        self._forms = forms
        self._keys = keys
        self._jku = jku
        self._kid = ""
        self._signed = forms

    def __call__(self) -> CardForms:
        key = self._keys.current()
        if key.kid != self._kid:
            forms = self._forms
            self._signed = CardForms(
                sign_card(forms.full, key, jku=self._jku),
                sign_card(forms.same_origin, key, jku=self._jku),
                forms.extended,
            )
            self._kid = key.kid
        return self._signed
