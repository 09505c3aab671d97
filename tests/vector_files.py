"""Where the golden vectors live (``tests/vectors/``, described in its README), and how a
test reads one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VECTORS = Path(__file__).parent / "vectors"


def load_vector(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
