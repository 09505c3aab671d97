"""Cost per event of an agent over gRPC (``AgentHost``) against the same agent in process.

The agent yields bench/codec.py's event mix (reasoning, a tool round, code, a streamed
answer) 20 times: ≈ 2,000 events per run. The same agent runs two ways in the same run:

- in process: this process iterates ``agent.run`` (the floor: a generator and nothing else);
- over gRPC: ``trpc-bridge serve --agent agenthost:mix_agent`` in a second process answers
  ``AgentHost`` (runner → ``event_to_proto``), and this process reads it through
  :class:`GrpcAgent` (``event_from_proto``), what ``serve --agent grpc://…`` does.

Then what a caller of the bridge sees: the same agent served by a ``BridgeServer`` in this
process, in process vs over gRPC, read by an A2A JSON-RPC client (``RemoteAgent``). And
the conversion alone (model → proto → bytes → proto → model), its share of the gRPC cost.

Costs are CPU time of both processes (this one and the sidecar, from /proc), the best of
several rounds, the two sides alternating: on a shared 2-core machine wall-clock time
mostly measures the other jobs. Wall-clock events/s are printed too.

Run: ``make bench`` (or ``.venv/bin/python bench/agenthost.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from codec import event_mix

from trpc_bridge.agent import Agent, FunctionAgent
from trpc_bridge.client import RemoteAgent
from trpc_bridge.client.grpc_agent import GrpcAgent
from trpc_bridge.codecs.agent_proto import event_from_proto, event_to_proto
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer
from trpc_bridge.v1 import agent_pb2 as pb

MIXES_PER_RUN = 20
ROUNDS = 5
HERE = Path(__file__).resolve().parent
_TICK = os.sysconf("SC_CLK_TCK")


def mix_agent() -> FunctionAgent:
    """The benchmarked agent (also what the sidecar process serves)."""
    events = event_mix() * MIXES_PER_RUN

    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        for event in events:
            yield event

    return FunctionAgent(name="mix", description="bench/codec.py's event mix", fn=run)


def cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) of this process, plus of process ``pid`` if given."""
    total = time.process_time()
    if pid is not None:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
    return total


@dataclass
class Cost:
    """The best round of one way of running the agent."""

    cpu: float = float("inf")
    wall: float = float("inf")
    #: Events the reader received in a round.
    received: int = 0

    async def measure(self, run: Callable[[], Awaitable[int]], pid: int | None) -> None:
        cpu, wall = cpu_seconds(pid), time.perf_counter()
        self.received = await run()
        self.wall = min(self.wall, time.perf_counter() - wall)
        self.cpu = min(self.cpu, cpu_seconds(pid) - cpu)


async def iterate(agent: Agent) -> int:
    return sum([1 async for _ in agent.run(AgentRequest(text="go"))])


@contextlib.contextmanager
def sidecar() -> Iterator[tuple[str, int]]:
    """``trpc-bridge serve`` of :func:`mix_agent` in its own process: its gRPC address
    and pid."""
    cli = Path(sys.executable).parent / "trpc-bridge"
    cmd = [str(cli), "serve", "--agent", "agenthost:mix_agent", "--port", "0", "--grpc-port", "0"]
    cmd.append("--no-trace-view")  # untraced, as before the span buffer's loopback default
    proc = subprocess.Popen(cmd, cwd=HERE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("gRPC"):
                yield line.split()[1], proc.pid
                break
        else:
            raise RuntimeError(f"the sidecar exited with {proc.wait()}")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def convert(events: list[AgentEvent]) -> int:
    for event in events:
        event_from_proto(pb.AgentEvent.FromString(event_to_proto(event).SerializeToString()))
    return len(events)


async def compare(
    local: Callable[[], Awaitable[int]], remote: Callable[[], Awaitable[int]], pid: int
) -> tuple[Cost, Cost]:
    """The same work with the agent in process and over gRPC, rounds alternating."""
    in_process, over_grpc = Cost(), Cost()
    for _ in range(ROUNDS):
        await in_process.measure(local, None)
        await over_grpc.measure(remote, pid)
    return in_process, over_grpc


def line(label: str, cost: Cost, events: int) -> None:
    print(
        f"{label:<40}{cost.cpu / events * 1e6:9.2f} µs CPU/event"
        f"{events / cost.wall:12,.0f} events/s wall"
    )


async def main() -> None:
    local = mix_agent()
    n = len(event_mix() * MIXES_PER_RUN)
    with sidecar() as (address, pid):
        async with await GrpcAgent.connect(f"grpc://{address}") as remote:
            direct = await compare(lambda: iterate(local), lambda: iterate(remote), pid)
            async with (
                BridgeServer(local) as local_server,
                BridgeServer(remote) as remote_server,
                await RemoteAgent.connect(local_server.base_url) as local_a2a,
                await RemoteAgent.connect(remote_server.base_url) as remote_a2a,
            ):
                served = await compare(lambda: iterate(local_a2a), lambda: iterate(remote_a2a), pid)
    conversion = Cost()
    await conversion.measure(lambda: asyncio.sleep(0, convert(event_mix() * MIXES_PER_RUN)), None)
    assert direct[0].received == direct[1].received == n, direct
    print(f"agent events per run: {n}; CPU of both processes, best of {ROUNDS} rounds")
    line("in process (iterate agent.run):", direct[0], n)
    line("over gRPC (GrpcAgent ← AgentHost):", direct[1], n)
    line("conversion alone (proto and back):", conversion, n)
    extra = (direct[1].cpu - direct[0].cpu) / n * 1e6
    print(
        f"gRPC cost per event: {extra:.1f} µs CPU, {direct[1].cpu / direct[0].cpu:.0f}x in process"
    )
    line("A2A caller, agent in process:", served[0], n)
    line("A2A caller, agent over gRPC:", served[1], n)
    print(f"ratio for an A2A caller, gRPC / in process: {served[1].cpu / served[0].cpu:.2f}x")
    # The bridge coalesces text deltas for a consumer slower than the agent: an agent in
    # process outruns the caller more, so its caller receives fewer, larger events.
    received = served[0].received, served[1].received
    per = served[0].cpu / received[0], served[1].cpu / received[1]
    print(f"events the A2A caller received: {received[0]} (in process), {received[1]} (gRPC)")
    print(f"per received event: {per[0] * 1e6:.0f} vs {per[1] * 1e6:.0f} µs CPU", end=" ")
    print(f"(ratio {per[1] / per[0]:.2f}x)")


if __name__ == "__main__":
    asyncio.run(main())
