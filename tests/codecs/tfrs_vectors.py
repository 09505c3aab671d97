"""Loading the tfrs golden vectors (``tests/vectors/T*.json``).

Long texts are written as ``{"$text": [[unit, count], …]}`` (the units repeated and
joined) so that the 8 KB / 64 KB limit cases stay readable files.
"""

from __future__ import annotations

from typing import Any

from vector_files import VECTORS, load_vector


def expand(value: Any) -> Any:
    """``value`` with every ``{"$text": …}`` replaced by the text it describes."""
    if isinstance(value, dict):
        if set(value) == {"$text"}:
            return "".join(unit * count for unit, count in value["$text"])
        return {k: expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v) for v in value]
    return value


def load(direction: str) -> list[dict[str, Any]]:
    vectors = [load_vector(p) for p in sorted(VECTORS.glob("T*.json"))]
    return [expand(v) for v in vectors if v["direction"] == direction]


def cases(direction: str) -> list[tuple[str, dict[str, Any]]]:
    """``(name, case)`` for every vector of ``direction`` and each of its variants (a
    variant overrides the vector's keys)."""
    out = []
    for vector in load(direction):
        out.append((vector["id"], vector))
        for variant in vector.get("variants", []):
            out.append((f"{vector['id']}:{variant['name']}", {**vector, **variant}))
    return out
