"""Every benchmark loads as `make bench` runs it: `python bench/<file>.py`, each in a
fresh interpreter whose path holds only what the file itself puts there (its folder
first, as for any script). The suite never times a benchmark; this only keeps a module
they import from moving out of their reach unnoticed, which would stop `make bench` at
that file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"

#: Loads the file as a module that is not ``__main__``: its imports and top-level code
#: run, its benchmark does not.
_LOAD = (
    "import runpy, sys; sys.path.insert(0, sys.argv[1]); "
    "runpy.run_path(sys.argv[2], run_name='bench_import_check')"
)


@pytest.mark.parametrize("name", sorted(p.name for p in BENCH.glob("*.py")))
def test_the_benchmark_loads(name: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _LOAD, str(BENCH), str(BENCH / name)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
