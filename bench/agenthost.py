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

Run: ``make bench`` (or ``.venv/bin/python bench/agenthost.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

from codec import best_of, event_mix

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


def mix_agent() -> FunctionAgent:
    """The benchmarked agent (also what the sidecar process serves)."""
    events = event_mix() * MIXES_PER_RUN

    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        for event in events:
            yield event

    return FunctionAgent(name="mix", description="bench/codec.py's event mix", fn=run)


async def best_async(fn: Callable[[], Awaitable[int]], rounds: int = ROUNDS) -> tuple[float, int]:
    """The fastest of ``rounds`` runs, and how many events a run gave."""
    best, count = float("inf"), 0
    for _ in range(rounds):
        start = time.perf_counter()
        count = await fn()
        best = min(best, time.perf_counter() - start)
    return best, count


async def iterate(agent: Agent) -> int:
    return sum([1 async for _ in agent.run(AgentRequest(text="go"))])


@contextlib.contextmanager
def sidecar() -> Iterator[str]:
    """``trpc-bridge serve`` of :func:`mix_agent` in its own process; its gRPC address."""
    cli = Path(sys.executable).parent / "trpc-bridge"
    cmd = [str(cli), "serve", "--agent", "agenthost:mix_agent", "--port", "0", "--grpc-port", "0"]
    proc = subprocess.Popen(cmd, cwd=HERE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("gRPC"):
                yield line.split()[1]
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


async def through_bridge(local: Agent, remote: Agent) -> tuple[tuple[float, int], ...]:
    """An A2A JSON-RPC caller of a BridgeServer serving each agent: the best run of each
    and how many events the caller received, alternating rounds so that both see the same
    machine load. The bridge coalesces text deltas for a consumer slower than the agent:
    an agent in process outruns the caller more, so its caller receives fewer events."""
    async with (
        BridgeServer(local) as local_server,
        BridgeServer(remote) as remote_server,
        await RemoteAgent.connect(local_server.base_url) as local_a2a,
        await RemoteAgent.connect(remote_server.base_url) as remote_a2a,
    ):
        best = {local_a2a: (float("inf"), 0), remote_a2a: (float("inf"), 0)}
        for _ in range(ROUNDS):
            for a2a in best:
                best[a2a] = min(best[a2a], await best_async(lambda: iterate(a2a), 1))  # noqa: B023
        return best[local_a2a], best[remote_a2a]


def line(label: str, seconds: float, events: int) -> None:
    print(f"{label:<44}{events / seconds:12,.0f} events/s {seconds / events * 1e6:9.2f} µs/event")


async def main() -> None:
    local = mix_agent()
    in_process, n = await best_async(lambda: iterate(local))
    events = event_mix() * MIXES_PER_RUN
    converted = best_of(lambda: convert(events), rounds=ROUNDS)
    with sidecar() as address:
        async with await GrpcAgent.connect(f"grpc://{address}") as remote:
            over_grpc, n_grpc = await best_async(lambda: iterate(remote))
            (served_local, got_local), (served_grpc, got_grpc) = await through_bridge(local, remote)
    assert n == n_grpc == len(events), (n, n_grpc)
    print(f"agent events per run: {n}")
    line("in process (iterate agent.run):", in_process, n)
    line("over gRPC (GrpcAgent ← AgentHost process):", over_grpc, n)
    line("conversion alone (to proto, bytes, back):", converted, n)
    per_event = (over_grpc - in_process) / n * 1e6
    print(f"gRPC cost per event: {per_event:.2f} µs (conversion {converted / n * 1e6:.2f} µs)")
    print(f"ratio over gRPC / in process:              {over_grpc / in_process:10.1f}x")
    line("A2A caller, agent in process:", served_local, n)
    line("A2A caller, agent over gRPC:", served_grpc, n)
    print(f"ratio for an A2A caller, gRPC / in process:{served_grpc / served_local:10.2f}x")
    print(f"events the A2A caller received: {got_local} (in process), {got_grpc} (over gRPC)")
    per_local, per_grpc = served_local / got_local, served_grpc / got_grpc
    print(f"per received event: {per_local * 1e6:.0f} µs vs {per_grpc * 1e6:.0f} µs")
    print(f"ratio per received event, gRPC / in process:{per_grpc / per_local:9.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
