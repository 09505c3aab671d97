"""Fan-out between replicas through Redis Streams: one stream per running task
(``bridge:task:<id>``), entry id ``0-<seq>``, so "after seq N" is Redis's own "after id
0-N" and a follower blocks in ``XREAD`` until the next frame arrives.

The publishing replica sends what its streams delivered since its last write in one
pipeline (``XADD`` per frame), so frames share round trips under load. A run's stream is
deleted when the task is accepted again (a follow-up run restarts at seq 1) and expires
:data:`~trpc_bridge.server.replicas.fanout.KEEP_FINISHED` seconds after its final frame. When a
replica dies, the one that fails its tasks appends the final frame with an
auto-generated id (larger than any ``0-<seq>``; a late write of the dead replica is then
refused by Redis). Each entry carries its frame (``f``) and its batch's publication time
(``t``, Unix seconds), which a follower's fan-out lag is measured from. Commands between
replicas go through the pub/sub channel
``bridge:control``. Task state itself stays in PostgreSQL (the task store).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as redis

from trpc_bridge.codecs.encoding import StreamFrame
from trpc_bridge.server.replicas.fanout import (
    KEEP_FINISHED,
    Batches,
    OnCommand,
    dispatch,
)
from trpc_bridge.server.replicas.frames import pack, unpack
from trpc_bridge.server.tasks.states import TERMINAL_STATES
from trpc_bridge.server.tasks.store import first_line
from trpc_bridge.telemetry.metrics import BridgeMetrics

logger = logging.getLogger(__name__)

CONTROL_CHANNEL = "bridge:control"
_BLOCK_MS = 1000


def _key(task_id: str) -> str:
    return f"bridge:task:{task_id}"


def _seq(entry_id: bytes | str, previous: int) -> int:
    """``0-<seq>`` → seq; an auto id (the final frame of a dead replica's task) comes next."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    high, _, low = text.partition("-")
    return int(low) if high == "0" else previous + 1


def _record_lag(metrics: BridgeMetrics, entries: list[Any], since: float) -> None:
    """The lag of each batch (distinct stamp) among ``entries`` published from ``since``."""
    now = time.time()
    for stamp in {fields.get(b"t") for _, fields in entries}:
        try:
            published = float(stamp)
        except (TypeError, ValueError):  # no stamp, or not a number
            continue
        if published >= since:
            metrics.fanout_lag(now - published, "redis")


async def _nothing() -> None:
    """Redis expires finished streams itself."""


def _ends(frame: StreamFrame) -> bool:
    status = getattr(frame, "status", None)
    return status is not None and status.state in TERMINAL_STATES


class RedisFanOut:
    def __init__(self, url: str) -> None:
        self.url = url
        self.on_command: OnCommand | None = None
        self.metrics: BridgeMetrics | None = None
        self._redis: Any = redis.Redis.from_url(url)
        self._incarnation = ""
        self._batches = Batches(self._write)
        self._tasks: list[asyncio.Task[None]] = []
        self._commands: set[asyncio.Future[None]] = set()

    async def start(self, incarnation: str) -> None:
        self._incarnation = incarnation
        await self._redis.ping()
        pubsub = self._redis.pubsub()
        await pubsub.subscribe(CONTROL_CHANNEL)
        self._tasks = [
            asyncio.create_task(self._batches.run(idle_every=60.0, on_idle=_nothing)),
            asyncio.create_task(self._listen(pubsub)),
        ]

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.flush(), 5)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self._redis.aclose()

    async def ping(self) -> None:
        await self._redis.ping()

    # --- publishing -----------------------------------------------------------------

    def publish(self, task_id: str, seq: int, frame: StreamFrame) -> None:
        self._batches.add((task_id, seq, frame))

    async def flush(self) -> None:
        await self._batches.flush()

    async def _write(self, batch: list[tuple[str, int, StreamFrame]], published: float) -> None:
        pipe = self._redis.pipeline(transaction=False)
        stamp = f"{published:.6f}"
        for task_id, seq, frame in batch:
            pipe.xadd(_key(task_id), {"f": pack(frame), "t": stamp}, id=f"0-{seq}")
            if _ends(frame):
                pipe.expire(_key(task_id), int(KEEP_FINISHED))
        try:
            await pipe.execute(raise_on_error=False)
        except Exception as exc:  # Redis away: the followers will poll the task store
            logger.warning("publishing %d frame(s) failed: %s", len(batch), first_line(exc))

    async def reset(self, task_id: str) -> None:
        await self._redis.delete(_key(task_id))

    async def ended(self, frame: StreamFrame) -> None:
        key = _key(frame.task_id)
        await self._redis.xadd(key, {"f": pack(frame), "t": f"{time.time():.6f}"})
        await self._redis.expire(key, int(KEEP_FINISHED))

    # --- following --------------------------------------------------------------------

    async def history(self, task_id: str, after: int) -> list[tuple[int, StreamFrame]]:
        entries = await self._redis.xrange(_key(task_id), min=f"({'0-' + str(after)}")
        return self._decode(entries, after)

    def _decode(self, entries: list[Any], after: int) -> list[tuple[int, StreamFrame]]:
        out = []
        for entry_id, fields in entries:
            after = _seq(entry_id, after)
            out.append((after, unpack(fields[b"f"])))
        return out

    async def follow(self, task_id: str, after: int) -> AsyncIterator[tuple[int, StreamFrame]]:
        """Every frame after ``after``; once a read's frames are handed on, the lag of
        each batch among them (its stamp) is recorded, except for batches published
        before this follower started (catching up is not lag)."""
        key, cursor = _key(task_id), f"0-{after}"
        started = time.time()
        while True:
            found = await self._redis.xread({key: cursor}, block=_BLOCK_MS)
            for _, entries in found or ():
                cursor = entries[-1][0]
                for seq, frame in self._decode(entries, after):
                    after = seq
                    yield seq, frame
                if self.metrics is not None:
                    _record_lag(self.metrics, entries, started)

    # --- commands ---------------------------------------------------------------------

    async def command(self, incarnation: str, verb: str, task_id: str) -> None:
        await self._redis.publish(CONTROL_CHANNEL, f"{incarnation} {verb} {task_id}")

    async def _listen(self, pubsub: Any) -> None:
        async for message in pubsub.listen():
            if message.get("type") != "message":
                continue
            data = message["data"].decode()
            incarnation, verb, task_id = [*data.split(" ", 2), "", ""][:3]
            if incarnation == self._incarnation:
                running = asyncio.ensure_future(dispatch(self.on_command, verb, task_id))
                self._commands.add(running)
                running.add_done_callback(self._commands.discard)
