"""JSON compared with its key order, for tests of writers that must put the same bytes
on the wire as a2a-sdk: object key order counts, except inside protobuf ``Struct`` maps
(``metadata``, ``data``), whose iteration order is the protobuf copy's."""

from __future__ import annotations

import json
from typing import Any

_MAPS = {"metadata", "data"}


def ordered(value: Any, in_map: bool = False) -> Any:
    """``value`` parsed with ``object_pairs_hook=list``, Struct maps sorted."""
    if isinstance(value, list) and value and all(isinstance(p, tuple) for p in value):
        pairs = [(k, ordered(v, in_map or k in _MAPS)) for k, v in value]
        return sorted(pairs) if in_map else pairs
    if isinstance(value, list):
        return [ordered(v, in_map) for v in value]
    return value


def ordered_json(raw: str | bytes) -> Any:
    """``raw`` JSON as :func:`ordered` compares it."""
    return ordered(json.loads(raw, object_pairs_hook=list))
