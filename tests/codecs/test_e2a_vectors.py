"""Golden vectors of the E2A codec (``tests/vectors/E*.json``, direction ``e2a``).

Each case names an operation of :mod:`e2a_ops` and gives its ``input`` and
either the JSON it must produce (``expect``) or the typed error it must raise
(``expect_error``: class name and a part of the message). The E2A document's own
examples (docs/specs/e2a.md §11.1–§11.5, §12.8) are E01–E06; E01 and E06 are read and written
unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest
from e2a_ops import OPS
from vector_files import VECTORS, load_vector

from trpc_bridge.codecs import e2a

FILES = sorted(VECTORS.glob("E[0-9]*.json"))
CASES = [
    pytest.param(case, id=f"{vector['id']}:{case['name']}")
    for vector in (load_vector(p) for p in FILES)
    for case in vector["cases"]
]


def test_the_documents_examples_are_covered() -> None:
    sources = " ".join(load_vector(p)["source"] for p in FILES)
    for section in ("§11.1", "§11.2", "§11.3", "§11.4", "§11.5", "§12.8"):
        assert section in sources


@pytest.mark.parametrize("case", CASES)
def test_vector(case: dict[str, Any]) -> None:
    op = OPS[case["op"]]
    if "expect_error" in case:
        error_type = getattr(e2a, case["expect_error"]["type"])
        with pytest.raises(error_type) as raised:
            op(case["input"])
        assert case["expect_error"]["match"] in str(raised.value)
        assert type(raised.value).__name__ == case["expect_error"]["type"]
    else:
        assert op(case["input"]) == case["expect"]
