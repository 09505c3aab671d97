"""What a frame and a request cost the bridge, counted in instructions rather than timed.

The timed ratios of ``vs_go.py`` move by 10-20 % from run to run on a shared machine;
instruction counts do not, so changes to the per-frame path are chosen by these. Each
server runs under valgrind's callgrind (:mod:`_callgrind`), started as users start it,
and is counted after a warm-up over A2A 0.3 JSON-RPC calls with trpc's
``interaction_spec_version`` (the trpc encoding, as ``vs_go.py`` sends them):

- ``serve`` streams: ``trpc-bridge serve --agent trpc_bridge.agents.scenarios:long`` and
  ``long10k``, instructions per SSE frame (the agent's own event construction included);
- ``serve`` unary: ``message/send`` of the ``text`` scenario, instructions per request;
- ``proxy`` streams and unary: ``trpc-bridge proxy`` in front of the Go peer (built from
  ``interop/go``; skipped without Go), the proxy process's instructions only.

Needs valgrind (``callgrind``, ``callgrind_control``); skipped without it.
Run: ``.venv/bin/python bench/stream_instructions.py [--only serve,proxy]``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import _callgrind
from _rawhttp import exchange, request_bytes
from peers import Process, build_gopeer, go_available, go_server
from vs_go import body

SERVE = ["serve", "--host", "127.0.0.1", "--port", "0", "--grpc-port", "-1", "--no-trace-view"]


@dataclass(frozen=True)
class Case:
    name: str
    side: str  # serve | proxy
    scenario: str
    stream: bool
    requests: int
    warm_up: int = 2


CASES = (
    Case("stream 1k deltas", "serve", "long", True, 3),
    Case("stream 10k deltas", "serve", "long10k", True, 1, 1),
    Case("stream tool", "serve", "tool", True, 20, 5),
    Case("unary message/send", "serve", "text", False, 200, 50),
    Case("stream 1k deltas", "proxy", "long", True, 3),
    Case("stream tool", "proxy", "tool", True, 20, 5),
    Case("unary message/send", "proxy", "text", False, 100, 30),
)


@contextmanager
def server(case: Case, out: Path) -> Iterator[Process]:
    with ExitStack() as stack:
        if case.side == "proxy":
            go = stack.enter_context(go_server(case.scenario, extra=["--blocking-send"]))
            args = ["proxy", "--upstream", go.url, "--host", "127.0.0.1", "--port", "0"]
            args += ["--grpc-port", "-1", "--no-trace-view"]
        else:
            args = [*SERVE, "--agent", f"trpc_bridge.agents.scenarios:{case.scenario}"]
        yield stack.enter_context(_callgrind.bridge(out, args))


async def measure(case: Case, work: Path) -> tuple[float, int]:
    """Instructions per unit (SSE frame, or request) and the units per request."""
    out = work / f"{case.side}-{case.scenario}.out"
    method = "message/stream" if case.stream else "message/send"
    with server(case, out) as process:
        url = process.url
        for index in range(case.warm_up):
            await exchange(url, request_bytes(url, body(method, index)))
        _callgrind.start(process)
        frames = 0
        for index in range(case.requests):
            result = await exchange(url, request_bytes(url, body(method, index)))
            frames += result.frames
        total = _callgrind.stop(process, out)
    units = frames if case.stream else case.requests
    return total / units, units // case.requests


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="serve,proxy", help="serve, proxy, or both")
    parser.add_argument("--cases", default="", help="only cases whose name contains this")
    args = parser.parse_args()
    if not _callgrind.available():
        print("skipped: valgrind (callgrind) is not on PATH")
        return
    sides = args.only.split(",")
    if "proxy" in sides and not go_available():
        print("proxy cases skipped: `go` is not on PATH (they proxy the Go peer)")
        sides.remove("proxy")
    elif "proxy" in sides:
        build_gopeer()
    with tempfile.TemporaryDirectory() as work:
        for case in CASES:
            if case.side not in sides or args.cases not in case.name:
                continue
            per_unit, per_request = await measure(case, Path(work))
            unit = f"frame ({per_request} per request)" if case.stream else "request"
            print(f"{case.side:5} {case.name:20} {per_unit / 1000:9.1f} k instructions per {unit}")


if __name__ == "__main__":
    asyncio.run(main())
