"""Streaming: the bridge vs a plain a2a-sdk server, 1k and 10k text deltas over JSON-RPC
0.3 SSE (uvicorn, loopback, one client in the same process).

Prints, per server: time, events/s and µs/event at 1k and 10k, and the per-event time
ratio 10k/1k (1.0 = per-event cost independent of stream length; target ≤ 1.2), then the
bridge/SDK events-per-second ratio at 10k (target ≥ 3).

Baseline: DefaultRequestHandler + InMemoryTaskStore + an AgentExecutor that enqueues a
Task, the same deltas as TaskArtifactUpdateEvents with append, then `completed`.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.types import (
    Artifact,
    Part,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

sys.path.insert(0, str(Path(__file__).parent))
from _loopback import sdk_server, time_stream

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions

SIZES = (1_000, 10_000)


def _count(request_text: str) -> int:
    return int(request_text)


async def bridge_deltas(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    for i in range(_count(request.text)):
        yield AgentEvent.text_delta(f"tok{i} ", "chatcmpl-bench")
        await asyncio.sleep(0)  # same scheduling as the baseline executor


class DeltaExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        await event_queue.enqueue_event(
            Task(
                id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[context.message] if context.message else [],
            )
        )
        for i in range(_count(context.get_user_input())):
            await event_queue.enqueue_event(
                TaskArtifactUpdateEvent(
                    task_id=task_id,
                    context_id=context_id,
                    artifact=Artifact(artifact_id="chatcmpl-bench", parts=[Part(text=f"tok{i} ")]),
                    append=i > 0,
                )
            )
            await asyncio.sleep(0)
        await event_queue.enqueue_event(
            TaskStatusUpdateEvent(
                task_id=task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED),
            )
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def measure(url: str, label: str) -> dict[int, float]:
    results: dict[int, float] = {}
    async with httpx.AsyncClient(timeout=None) as http:
        await time_stream(http, url, "50")  # warm-up
        for n in SIZES:
            seconds, frames = await time_stream(http, url, str(n))
            results[n] = seconds
            print(
                f"{label:8} {n:>6} deltas: {seconds * 1000:8.1f} ms  {n / seconds:9.0f} events/s"
                f"  {seconds / n * 1e6:7.1f} µs/event  ({frames} SSE frames)"
            )
    small, large = SIZES
    ratio = (results[large] / large) / (results[small] / small)
    print(f"{label:8} per-event time ratio {large // 1000}k/{small // 1000}k: {ratio:.2f}")
    return results


async def main() -> None:
    agent = FunctionAgent(name="bench", description="deltas", fn=bridge_deltas)
    async with BridgeServer(agent, ServerOptions(grpc_port=None)) as bridge:
        ours = await measure(bridge.jsonrpc_url, "bridge")
    async with sdk_server(DeltaExecutor()) as url:
        theirs = await measure(url, "a2a-sdk")
    large = SIZES[-1]
    print(
        f"bridge/a2a-sdk events/s at {large // 1000}k deltas: "
        f"{theirs[large] / ours[large]:.1f}x (target >= 3x); "
        f"at {SIZES[0] // 1000}k: {theirs[SIZES[0]] / ours[SIZES[0]]:.1f}x"
    )


if __name__ == "__main__":
    asyncio.run(main())
