"""Key rotation under a running server (``server/signing/key_ring.py``), on a clock the
test moves: a new key is published before it signs, a retired key stays published
until its last token has expired, then leaves the JWKS; the card's forms are signed
again when the key changes, and only then (``a2a/card_signing.py``)."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server.a2a.card import build_agent_card, card_forms
from trpc_bridge.server.a2a.card_signing import SignedCards
from trpc_bridge.server.signing.key_ring import KeyRing


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _write_key(path: Path, key: object, at: float) -> None:
    pem = key.private_bytes(  # type: ignore[attr-defined]
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.write_bytes(pem)
    os.utime(path, (at, at))


def kids(ring: KeyRing) -> list[str]:
    return [k.kid for k in ring.published()]


def test_a_new_key_file_is_published_first_and_the_old_key_kept_until_its_tokens_expire(
    tmp_path: Path,
) -> None:
    clock = Clock()
    path = tmp_path / "key.pem"
    _write_key(path, ec.generate_private_key(ec.SECP256R1()), 1)
    ring = KeyRing(path=path, keep_for=360, check_every=1, publish_ahead=60, clock=clock)
    old = ring.current()
    assert kids(ring) == [old.kid]

    _write_key(path, ed25519.Ed25519PrivateKey.generate(), 2)
    clock.now += 0.5
    assert ring.current() == old and kids(ring) == [old.kid]  # not looked at yet
    clock.now += 1
    assert ring.current() == old  # seen, published, not signing yet
    new_kid = kids(ring)[1]
    assert new_kid != old.kid
    clock.now += 60
    new = ring.current()
    assert new.kid == new_kid and new.algorithm == "EdDSA"
    assert kids(ring) == [new_kid, old.kid]  # old tokens still verify
    clock.now += 359
    assert kids(ring) == [new_kid, old.kid]
    clock.now += 2
    assert kids(ring) == [new_kid]


def test_a_broken_key_file_keeps_the_current_key(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "key.pem"
    _write_key(path, ec.generate_private_key(ec.SECP256R1()), 1)
    ring = KeyRing(path=path, keep_for=60, check_every=0, publish_ahead=0, clock=clock)
    old = ring.current()
    path.write_text("-----BEGIN PRIVATE KEY-----\nhalf a key")  # a write caught midway
    assert ring.current() == old and kids(ring) == [old.kid]
    path.unlink()
    assert ring.current() == old
    _write_key(path, ec.generate_private_key(ec.SECP384R1()), 5)
    assert ring.current().algorithm == "ES384"


def test_generated_keys_rotate_with_the_next_key_published_a_period_ahead() -> None:
    clock = Clock()
    ring = KeyRing(rotate_every=100, keep_for=30, clock=clock)
    first = ring.current()
    current, upcoming = kids(ring)
    assert current == first.kid and upcoming != first.kid
    clock.now += 100
    assert ring.current().kid == upcoming
    assert kids(ring)[0] == upcoming and first.kid in kids(ring)
    assert len(kids(ring)) == 3  # current, the next one, the retired one
    clock.now += 31
    assert first.kid not in kids(ring)
    never = KeyRing(rotate_every=0, clock=clock)
    key = never.current()
    clock.now += 10**9
    assert never.current() == key


def test_a_file_back_to_the_signing_key_cancels_the_waiting_one(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "key.pem"
    first = ec.generate_private_key(ec.SECP256R1())
    _write_key(path, first, 1)
    ring = KeyRing(path=path, check_every=0, publish_ahead=60, clock=clock)
    old = ring.current()
    _write_key(path, ed25519.Ed25519PrivateKey.generate(), 2)
    assert len(kids(ring)) == 2  # the new key waits, published
    _write_key(path, first, 3)  # changed back before it signed
    assert kids(ring) == [old.kid]
    clock.now += 61
    assert ring.current() == old


def test_card_forms_are_signed_again_only_when_the_key_changes(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "card.pem"
    _write_key(path, ec.generate_private_key(ec.SECP256R1()), 1)
    ring = KeyRing(path=path, check_every=0, publish_ahead=0, clock=clock)
    card = build_agent_card(demo_agent(), base_url="http://h:1", grpc_address="h:2")
    cards = SignedCards(card_forms(card), ring, jku="http://h:1/.well-known/jwks.json")
    first = cards()
    assert cards() is first  # no signature per request
    assert not card.signatures  # the unsigned card is left as it was
    assert first.extended and len(first.full.signatures) == len(first.same_origin.signatures) == 1
    _write_key(path, ed25519.Ed25519PrivateKey.generate(), 2)
    second = cards()
    assert second is not first and cards() is second
    assert second.full.signatures[0].signature != first.full.signatures[0].signature
