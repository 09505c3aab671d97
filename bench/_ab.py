"""Revisions of the bridge compared on the same requests: the tool for judging a change
by the figures it moves. Not a benchmark itself (``make bench`` skips files starting with
``_``).

Each revision's server runs in processes of its own (``--copies`` of each) beside the Go
peer, as ``trpc-bridge proxy`` in front of it or ``trpc-bridge serve`` of the same
scenario. Every turn asks every process once, **in a new random order**, and checks the
answer (a stream must end ``completed``, a unary answer must hold a ``result``). Asked in a
fixed order, even one reversed every other turn or round, two copies of one build
differed by up to 23 %, more than most changes (``bench/README.md``, twelfth pass); the
copies show what is left of that spread.

It prints, per revision, the median latency over its copies (and each copy's), the CPU a
request took (``/proc/<pid>/stat``), both relative to the first revision, and the ratio
to Go. By turns, every process starts each request with caches the others have just used;
between revisions of the bridge that is fair, against Go it understates the bridge: the
goals are judged by ``vs_go.py``.

Run: ``.venv/bin/python bench/_ab.py [--mode proxy|serve] [--workload unary|stream|tool|long]
[--turns 1000] [--copies 2] REV [REV ...]``. ``REV`` is a git revision, or ``.`` for the
working tree as it is; the first is the baseline; naming one twice is an A/A check. Each
revision runs from a temporary git worktree, imported through a tree laid out as the
package (as ``make typecheck`` builds one) on this checkout's ``.venv``: a revision whose
dependencies differ needs its own environment.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "interop"))
from _rawhttp import exchange, request_bytes
from peers import Process, build_gopeer, go_available, go_server, running
from vs_go import Workload, body, check, cpu_seconds

ROOT = Path(__file__).resolve().parents[1]

#: Starts the CLI of whichever ``trpc_bridge`` is first on ``PYTHONPATH``.
_CLI = "import sys; from trpc_bridge.cli import main; sys.argv[0] = 'trpc-bridge'; main()"


#: ``vs_go.py``'s workloads by their name here (``requests``: unused, one a turn).
WORKLOADS = {
    "unary": Workload("unary", "text", 1, stream=False),
    "stream": Workload("stream", "text", 1),
    "tool": Workload("tool", "tool", 1),
    "long": Workload("long", "long", 1),
}


@dataclass
class Side:
    """One server process and what its requests took."""

    label: str
    process: Process
    seconds: list[float] = field(default_factory=list)
    cpu: float = 0.0
    #: Per turn: its requests' wall time from the first one's start to the last one's
    #: end, divided by their number (``--burst``).
    paced: list[float] = field(default_factory=list)


def import_tree(source: Path, into: Path) -> Path:
    """A folder holding ``trpc_bridge`` as the package is laid out when installed
    (``bridge/*`` with ``codecs`` and ``telemetry`` beside them), of links into
    ``source``; for ``PYTHONPATH``, ahead of the editable install's finder."""
    package = into / "trpc_bridge"
    package.mkdir(parents=True)
    for entry in (source / "bridge").iterdir():
        (package / entry.name).symlink_to(entry)
    for sub in ("codecs", "telemetry"):
        (package / sub).symlink_to(source / sub)
    return into


@contextlib.contextmanager
def import_trees(revisions: list[str], scratch: Path) -> Iterator[dict[str, Path]]:
    """Each revision's import tree (``.``: the working tree), its worktree removed after."""
    trees: dict[str, Path] = {}
    added: list[Path] = []
    git = ["git", "-C", str(ROOT)]
    try:
        for index, revision in enumerate(dict.fromkeys(revisions)):
            source = ROOT
            if revision != ".":
                # Its name is the worktree's under .git/worktrees: unique to this run.
                source = scratch / f"ab-{os.getpid()}-{index}"
                add = [*git, "worktree", "add", "--detach", "--quiet", str(source), revision]
                subprocess.run(add, check=True)
                added.append(source)
            trees[revision] = import_tree(source, scratch / f"import-{index}")
        yield trees
    finally:
        for source in added:
            subprocess.run([*git, "worktree", "remove", "--force", str(source)], check=False)


def command(mode: str, workload: Workload, upstream: str) -> list[str]:
    if mode == "proxy":
        role = ["proxy", "--upstream", upstream]
    else:
        agent = f"trpc_bridge.agents.scenarios:{workload.scenario}"
        role = ["serve", "--agent", agent, "--host", "127.0.0.1"]
    return [
        sys.executable,
        "-c",
        _CLI,
        *role,
        "--port",
        "0",
        "--grpc-port",
        "-1",
        "--no-trace-view",
    ]


async def ask(side: Side, workload: Workload, index: int) -> None:
    url = side.process.url
    method = "message/stream" if workload.stream else "message/send"
    before = cpu_seconds(side.process.proc.pid)
    result = await exchange(url, request_bytes(url, body(method, index)))
    side.cpu += cpu_seconds(side.process.proc.pid) - before
    check(result, workload, side.label)
    side.seconds.append(result.seconds)


def report(go: Side, revisions: list[tuple[str, list[Side]]], burst: int) -> None:
    go_median = statistics.median(go.seconds)
    print(f"go: median {go_median * 1e6:,.0f} us a request")
    figures = [
        (
            label,
            copies,
            statistics.median(s for side in copies for s in side.seconds),
            sum(side.cpu for side in copies) / sum(len(side.seconds) for side in copies),
        )
        for label, copies in revisions
    ]
    _, _, base_latency, base_cpu = figures[0]
    for label, copies, latency, cpu in figures:
        each = ", ".join(f"{statistics.median(side.seconds) * 1e6:,.0f}" for side in copies)
        # CPU is counted in clock ticks (10 ms): a short run may see none.
        relative = f"{cpu / base_cpu - 1:+.1%}" if base_cpu else "no ticks"
        print(
            f"{label}: median {latency * 1e6:,.0f} us ({latency / base_latency - 1:+.1%}; "
            f"copies {each}), CPU {cpu * 1e6:,.0f} us a request ({relative}), "
            f"{go_median / latency:.3f}x Go by turns"
        )
    if burst > 1:
        # Back to back, what a request leaves for after its response delays the next.
        go_paced = statistics.median(go.paced)
        base = statistics.median(p for side in revisions[0][1] for p in side.paced)
        for label, copies in revisions:
            paced = statistics.median(p for side in copies for p in side.paced)
            print(
                f"{label}: {burst} back to back, {paced * 1e6:,.0f} us a request "
                f"({paced / base - 1:+.1%}), {go_paced / paced:.3f}x Go"
            )


async def compare(
    mode: str,
    workload: Workload,
    revisions: list[str],
    copies: int,
    turns: int,
    seed: int,
    burst: int,
) -> None:
    env = {"OTEL_INSTRUMENTATION_A2A_SDK_ENABLED": "false"}  # as `make bench` runs
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        trees = stack.enter_context(import_trees(revisions, scratch))
        go = Side(
            "go", stack.enter_context(go_server(workload.scenario, extra=["--blocking-send"]))
        )
        grouped: list[tuple[str, list[Side]]] = []
        for index, revision in enumerate(revisions):
            label = revision if revisions.index(revision) == index else f"{revision} ({index + 1})"
            tree_env = {**env, "PYTHONPATH": str(trees[revision])}
            argv = command(mode, workload, go.process.url)
            grouped.append(
                (
                    label,
                    [
                        Side(label, stack.enter_context(running(argv, tree_env)))
                        for _ in range(copies)
                    ],
                )
            )
        sides = [go, *(side for _, group in grouped for side in group)]
        for side in sides:  # warm-up: imports, pooled connections, caches
            for index in range(100):
                await ask(side, workload, index)
            side.seconds.clear()
            side.cpu = 0.0
        order = random.Random(seed)
        for index in range(turns):
            order.shuffle(sides)
            for side in sides:
                start = time.perf_counter()
                for _ in range(burst):
                    await ask(side, workload, index)
                side.paced.append((time.perf_counter() - start) / burst)
        report(go, grouped, burst)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("revisions", nargs="+", metavar="REV")
    parser.add_argument("--mode", choices=("proxy", "serve"), default="proxy")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="unary")
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--burst",
        type=int,
        default=1,
        help="requests a process gets back to back in its turn (as vs_go.py sends them)",
    )
    args = parser.parse_args()
    if not go_available():
        print("skipped: `go` is not on PATH (the Go peer is built from interop/go)")
        return
    build_gopeer()
    workload = WORKLOADS[args.workload]
    print(
        f"{args.mode}, {args.workload}: {args.turns} turns, {args.copies} copies of each "
        f"revision, load average {os.getloadavg()[0]:.1f}"
    )
    asyncio.run(
        compare(
            args.mode,
            workload,
            args.revisions,
            args.copies,
            args.turns,
            args.seed,
            args.burst,
        )
    )


if __name__ == "__main__":
    main()
