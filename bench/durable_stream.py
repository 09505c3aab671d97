"""Durable running tasks: what journaling a streamed task costs per event.

The same 1k / 10k-delta JSON-RPC SSE streams as ``server_stream.py``, served with the
in-memory store (nothing journaled: the baseline) and with a database store (SQLite
file; PostgreSQL too when its server binaries are installed), where the task is stored
when accepted, checkpointed every 0.2 s while it runs and stored at the end. Prints
per-event CPU time of this process (server and client: on a shared machine wall-clock
time measures the other jobs; the database server's own CPU is not counted) and the
ratios: database / memory at each size (the journal's cost) and 10k / 1k per store (flat
= the cost does not grow with the stream). Best of three rounds.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
import db_servers
import httpx
from _loopback import time_stream
from server_stream import SIZES, bridge_deltas

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.server import BridgeServer, Durability, ServerOptions


@contextlib.contextmanager
def stores() -> Iterator[list[tuple[str, str]]]:
    with tempfile.TemporaryDirectory() as tmp:
        found = [("memory", ""), ("sqlite", f"sqlite:///{tmp}/tasks.db")]
        if db_servers.unavailable():
            print(f"postgresql: skipped ({db_servers.unavailable()})")
            yield found
            return
        with db_servers.postgres_server() as url:
            yield [*found, ("postgres", url)]


ROUNDS = 3


async def cpu_per_event(url: str, label: str) -> dict[int, float]:
    """Best-of-rounds CPU seconds per event at each size."""
    best: dict[int, float] = {}
    async with httpx.AsyncClient(timeout=None) as http:
        await time_stream(http, url, "50")  # warm-up
        for n in SIZES:
            for _ in range(ROUNDS):
                start = time.process_time()
                await time_stream(http, url, str(n))
                used = (time.process_time() - start) / n
                best[n] = min(best.get(n, used), used)
            print(f"{label:8} {n:>6} deltas: {best[n] * 1e6:7.1f} µs CPU/event")
    small, large = SIZES
    print(
        f"{label:8} per-event CPU ratio {large // 1000}k/{small // 1000}k: "
        f"{best[large] / best[small]:.2f}"
    )
    return best


async def main() -> None:
    agent = FunctionAgent(name="bench", description="deltas", fn=bridge_deltas)
    results: dict[str, dict[int, float]] = {}
    with stores() as urls:
        for label, url in urls:
            # The journal alone: sharing frames between replicas is bench/replicas.py's.
            options = ServerOptions(
                grpc_port=None, durability=Durability(task_store=url, fanout="none")
            )
            async with BridgeServer(agent, options) as server:
                results[label] = await cpu_per_event(server.jsonrpc_url, label)
    base = results["memory"]
    for label, times in results.items():
        if label != "memory":
            ratios = "  ".join(f"{n // 1000}k {times[n] / base[n]:.2f}" for n in SIZES)
            print(f"{label} / memory per-event CPU: {ratios}")


if __name__ == "__main__":
    asyncio.run(main())
