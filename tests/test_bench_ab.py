"""``bench/_ab.py`` compares revisions of the bridge: it runs from a fresh interpreter,
serves a revision from a worktree of its own beside the working tree, checks every answer,
prints a line per revision, and leaves no worktree behind. A few turns only: the suite
never times anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from peers import build_gopeer, go_available

ROOT = Path(__file__).resolve().parents[1]


def _worktrees() -> str:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "list", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    )
    return listed.stdout


# One worker runs both: each compares the checkout's worktrees before and after.
@pytest.mark.xdist_group("bench_ab")
@pytest.mark.parametrize(("mode", "workload"), [("proxy", "tool"), ("serve", "unary")])
def test_two_revisions_compared(mode: str, workload: str) -> None:
    if not go_available():
        pytest.skip("Go toolchain not on PATH")
    build_gopeer()
    before = _worktrees()
    flags = ["--mode", mode, "--workload", workload, "--turns", "3", "--copies", "1"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "_ab.py"), *flags, ".", "HEAD"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{mode}, {workload}: 3 turns, 1 copies")
    assert lines[1].startswith("go: median ")
    assert lines[2].startswith(".: median ") and "(+0.0%;" in lines[2]
    assert lines[3].startswith("HEAD: median ") and "x Go by turns" in lines[3]
    assert _worktrees() == before
