"""The ids the bridge mints are version-4 UUIDs in canonical form behind their prefix."""

from __future__ import annotations

import uuid

from trpc_bridge.names import new_id, new_ids


def test_new_id_is_a_canonical_uuid4() -> None:
    seen = set()
    variants = set()
    minted_ids = [new_id("msg") for _ in range(1000)] + new_ids("msg", 1000)
    for minted in minted_ids:
        prefix, _, rest = minted.partition("-")
        parsed = uuid.UUID(rest)
        assert prefix == "msg"
        assert str(parsed) == rest  # lower-case, dashes where str(uuid4()) has them
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
        variants.add(rest[19])
        seen.add(minted)
    assert len(seen) == 2000
    assert variants == set("89ab")  # every variant digit occurs
