"""Replicas: throughput and first-event latency through 3 replicas vs 1, and what the
shared fan-out costs per event compared with in-process delivery.

Every server is a real ``trpc-bridge serve`` process on one PostgreSQL database (task
store), serving the ``long`` scenario at 5 ms per delta. Skipped, saying so, when
the PostgreSQL server binaries are missing (Redis rows when ``redis-server`` is).

1. ``STREAMS`` concurrent ``message/stream`` calls, round-robin over the replicas: events
   per second (all frames received / wall time) and p99 time to the first frame, with 1
   replica and with 3 (fan-out through PostgreSQL). On a 2-core machine 3 processes
   share the same cores: the figure shows the overhead of spreading, not a speed-up.
2. CPU time the serving process spends per event (``/proc/<pid>/stat``) with the fan-out
   off (``--fanout none``: in-process delivery only, the task still journaled), through
   PostgreSQL and through Redis; the ratios are the per-event cost of sharing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "interop"))
import db_servers
from _loopback import message_body
from peers import Process, bridge_server

#: 1000 deltas 5 ms apart: a model's pace (an agent that never awaits would hold the
#: event loop for its whole run, and every other stream's first frame with it).
AGENT = "trpc_bridge.agents.scenarios:long_slow"
STREAMS = 30
CPU_STREAMS = 10


def _flags(store: str, fanout: str) -> list[str]:
    return ["--grpc-port", "-1", "--task-store", store, "--fanout", fanout]


@contextlib.contextmanager
def servers(store: str, fanout: str, count: int) -> Iterator[list[Process]]:
    with contextlib.ExitStack() as stack:
        yield [
            stack.enter_context(bridge_server(AGENT, extra=_flags(store, fanout)))
            for _ in range(count)
        ]


async def _stream(http: httpx.AsyncClient, url: str, index: int) -> tuple[float, int]:
    """Seconds to the first frame, and the frames received."""
    started, first, frames = time.perf_counter(), 0.0, 0
    async with http.stream("POST", url, json=message_body("message/stream", "go", index)) as r:
        async for line in r.aiter_lines():
            if line.startswith("data:"):
                frames += 1
                first = first or time.perf_counter() - started
    return first, frames


async def throughput(urls: list[str], label: str) -> None:
    async with httpx.AsyncClient(timeout=None) as http:
        await asyncio.gather(*(_stream(http, u, 0) for u in urls))  # warm-up
        started = time.perf_counter()
        results = await asyncio.gather(
            *(_stream(http, urls[i % len(urls)], i) for i in range(STREAMS))
        )
        wall = time.perf_counter() - started
    firsts = sorted(first for first, _ in results)
    p99 = firsts[min(len(firsts) - 1, int(len(firsts) * 0.99))]
    events = sum(frames for _, frames in results)
    print(f"{label:24} {events / wall:9.0f} events/s   p99 first frame {p99 * 1000:7.1f} ms")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def cpu_per_event(process: Process, label: str) -> float:
    async with httpx.AsyncClient(timeout=None) as http:
        await _stream(http, process.url, 0)  # warm-up
        before = _cpu_seconds(process.proc.pid)
        results = await asyncio.gather(*(_stream(http, process.url, i) for i in range(CPU_STREAMS)))
        await asyncio.sleep(0.5)  # the fan-out writer's last batch
        used = _cpu_seconds(process.proc.pid) - before
    per_event = used / sum(frames for _, frames in results)
    print(f"{label:24} {per_event * 1e6:7.1f} µs CPU per event (serving process)")
    return per_event


async def main() -> None:
    if reason := db_servers.unavailable():
        print(f"bench/replicas.py skipped: {reason}")
        return
    with db_servers.postgres_server() as store:
        for count in (1, 3):
            with servers(store, "postgresql", count) as running:
                await throughput([p.url for p in running], f"{count} replica(s), PostgreSQL")
        costs = {}
        for fanout in ("none", "postgresql"):
            with servers(store, fanout, 1) as (one,):
                costs[fanout] = await cpu_per_event(one, f"fan-out {fanout}")
        if reason := db_servers.redis_unavailable():
            print(f"redis: skipped ({reason})")
        else:
            with db_servers.redis_server() as redis_url, servers(store, redis_url, 1) as (one,):
                costs["redis"] = await cpu_per_event(one, "fan-out redis")
    for name, cost in costs.items():
        if name != "none":
            print(f"fan-out {name} / in-process per-event CPU: {cost / costs['none']:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
