"""Shared by the instruction-counting benchmarks: a server process run under valgrind's
callgrind, counting only inside a window the benchmark opens and closes. Not a benchmark
itself.

Instruction counts are deterministic where timed ratios move by 10-20 % on a shared
machine: the same binary, inputs and environment give the same count whatever else the
machine is doing. Needs ``valgrind`` and ``callgrind_control`` (:func:`available`).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "interop"))
from peers import TRPC_BRIDGE, Process, running


def available() -> bool:
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def bridge_command(out: Path, *args: str) -> list[str]:
    """``trpc-bridge ARGS`` under callgrind, instrumentation off until :func:`counting`."""
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
    return [*cmd, sys.executable, str(TRPC_BRIDGE), *args]


@contextlib.contextmanager
def bridge(out: Path, args: list[str], env: Mapping[str, str] | None = None) -> Iterator[Process]:
    with running(bridge_command(out, *args), env) as process:
        yield process


def _control(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)


def start(process: Process) -> None:
    """Start counting (after the warm-up)."""
    _control(process.proc.pid, "-i", "on")


def stop(process: Process, out: Path) -> int:
    """Stop counting; the instructions counted since :func:`start`."""
    pid = process.proc.pid
    _control(pid, "-i", "off")
    _control(pid, "-d")
    return instructions(out)


def instructions(out: Path) -> int:
    """The instructions of the window: the largest ``totals:`` of callgrind's dumps (the
    one ``callgrind_control -d`` asked for; the dump at exit counts nothing more, the
    instrumentation being off by then). Earlier windows' dumps are removed."""
    dumps = list(out.parent.glob(out.name + "*"))
    totals = [
        int(line.split()[1])
        for dump in dumps
        for line in dump.read_text().splitlines()
        if line.startswith("totals:")
    ]
    for dump in dumps:
        dump.unlink()
    if not totals or max(totals) == 0:
        raise RuntimeError(f"no callgrind totals in {out}*")
    return max(totals)
