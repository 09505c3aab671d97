"""A consumer far behind the agent loses nothing: deltas are coalesced, never dropped
(a2a-sdk's default handler silently ends such a stream at 1,024 events behind)."""

from __future__ import annotations

import asyncio

import httpx

from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.tasks.subscriber import Subscriber

from .helpers import counting_agent, go_message, jsonrpc, sse_results

#: ~6 MB of frames: more than the socket buffers hold (loopback's 64 KiB segments let the
#: server's send buffer grow to its 4 MiB maximum), so a reader that stops reading leaves
#: the rest of the run in its subscriber buffer, where deltas are merged.
DELTAS = 15_000


async def test_paused_reader_gets_every_delta_in_order() -> None:
    options = ServerOptions(grpc_port=None)
    async with (
        BridgeServer(counting_agent(DELTAS), options) as server,
        httpx.AsyncClient(timeout=None) as http,
    ):
        body = jsonrpc("message/stream", {"message": go_message("count")})
        texts: list[str] = []
        frames = 0
        async with http.stream("POST", server.jsonrpc_url, json=body) as response:
            results = sse_results(response)
            await anext(results)  # submitted
            # Stop reading until the run is over (the producer never waits for readers).
            while len(server.handler.registry):
                await asyncio.sleep(0.01)
            async for result in results:
                frames += 1
                last = result
                if result.get("kind") == "artifact-update" and not result.get("lastChunk"):
                    texts.extend(p["text"] for p in result["artifact"]["parts"])
    assert "".join(texts) == "".join(f"t{i} " for i in range(DELTAS))
    assert last["kind"] == "status-update" and last["status"]["state"] == "completed"
    assert frames < DELTAS  # the lagging reader got merged frames


async def test_subscriber_coalesces_only_when_lagging() -> None:
    from test_vectors_encode import run_stream

    vector = {
        "options": {},
        "input": [
            {
                "id": "r",
                "object": "chat.completion.chunk",
                "is_partial": True,
                "choices": [{"delta": {"content": f"{i},"}}],
            }
            for i in range(100)
        ],
    }
    frames = run_stream(vector)
    keeping_up = Subscriber(coalesce_after=8)
    delivered = []
    for frame in frames:
        keeping_up.push(frame)
        delivered.append(await keeping_up.next())
    assert delivered == frames and keeping_up.coalesced == 0

    lagging = Subscriber(coalesce_after=8)
    for frame in frames:
        lagging.push(frame)
    lagging.close()
    out = []
    while (item := await lagging.next()) is not None:
        out.append(item)
    assert len(out) == 9  # 8 queued as-is, then everything else merged into the 9th
    assert "".join(f.artifact.parts[0].text for f in out) == "".join(f"{i}," for i in range(100))
    assert frames[9].artifact.parts[0].text == "9,"  # shared originals are not mutated
