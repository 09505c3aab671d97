"""Live frames shared between replicas: what a fan-out backend offers, and the pieces
every backend shares.

The replica that runs a task publishes every frame it delivers, numbered (``seq``, from
1, per run, the same count the journal stores with each snapshot); any replica can read
a task's frames after a snapshot's ``seq`` (:meth:`FanOut.history`) and follow the rest
as they come (:meth:`FanOut.follow`): snapshot + frames after its ``seq`` is the task as
it stands, each frame once, in order. Replicas also send each other small commands
(cancel a task, watch it for push) through it. Backends: PostgreSQL ``LISTEN/NOTIFY``
over an event table (:mod:`~trpc_bridge.server.replicas.fanout_pg`) and Redis Streams
(:mod:`~trpc_bridge.server.replicas.fanout_redis`);
:func:`~trpc_bridge.server.replicas.factory.make_fanout` picks one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from trpc_bridge.codecs.encoding import StreamFrame
from trpc_bridge.telemetry.metrics import BridgeMetrics

logger = logging.getLogger(__name__)

#: Seconds a follower waits for a wake-up before it looks anyway (a lost notification,
#: a reconnection).
POLL = 1.0
#: Seconds the frames of a finished run are kept for followers that are behind.
KEEP_FINISHED = 120.0

#: Seconds the writer lets frames gather before it sends a batch. Without it, a model's
#: pace (a delta every few ms) makes every frame its own database round trip, which costs
#: more CPU than serving the frame; followers on other replicas see frames this much later.
LINGER = 0.01

#: A command from another replica: ``(verb, task_id)``; verbs ``cancel``, ``push``.
OnCommand = Callable[[str, str], Awaitable[None] | None]


class FanOut(Protocol):
    #: Called for each command sent to this replica (set by the server).
    on_command: OnCommand | None
    #: Where a follower records the lag of the frames it receives (set by the server);
    #: ``None``: metrics are off.
    metrics: BridgeMetrics | None

    async def start(self, incarnation: str) -> None: ...

    async def stop(self) -> None: ...

    def publish(self, task_id: str, seq: int, frame: StreamFrame) -> None:
        """Queue frame ``seq`` of ``task_id`` (sent in the background, in order)."""

    async def flush(self) -> None:
        """Until every queued frame is sent."""

    async def reset(self, task_id: str) -> None:
        """A new run of ``task_id`` starts at seq 1: forget an earlier run's frames."""

    async def ended(self, frame: StreamFrame) -> None:
        """Another replica ended the task (its replica died): tell its followers."""

    async def history(self, task_id: str, after: int) -> list[tuple[int, StreamFrame]]:
        """The frames of ``task_id`` published after ``after``, in order."""

    def follow(self, task_id: str, after: int) -> AsyncIterator[tuple[int, StreamFrame]]:
        """Every frame after ``after``, as it comes, until the caller stops."""

    async def command(self, incarnation: str, verb: str, task_id: str) -> None:
        """Send ``verb task_id`` to the replica incarnation ``incarnation``."""

    async def ping(self) -> None:
        """Raise unless the backend answers (readiness); a backend whose connection was
        lost tries to make a new one here."""


#: Writes one batch, given the wall-clock time its oldest item was added (the batch's
#: publication time, which followers on other replicas measure their lag from).
WriteBatch = Callable[[list[Any], float], Awaitable[None]]


class Batches:
    """What a fan-out's streams delivered, sent by one writer task in batches: all that
    queued up while the previous batch was on its way, or within ``linger`` seconds of
    the first frame of a batch (:data:`LINGER`). ``write`` must not raise.

    Each batch is stamped once with the time its first item came (one clock read per
    batch, none per frame): the backends send the stamp along so that followers can
    measure the fan-out lag (``trpc_bridge.replicas.fanout.lag``)."""

    def __init__(self, write: WriteBatch, *, linger: float = LINGER) -> None:
        self._write = write
        self._linger = linger
        self._pending: list[Any] = []
        self._since = 0.0
        self._more = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()

    def add(self, item: Any) -> None:
        if not self._pending:
            self._since = time.time()
        self._pending.append(item)
        self._idle.clear()
        self._more.set()

    async def flush(self) -> None:
        await self._idle.wait()

    async def run(self, *, idle_every: float, on_idle: Callable[[], Awaitable[None]]) -> None:
        """Write batches for ever; ``on_idle`` at least every ``idle_every`` seconds."""
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._more.wait(), idle_every)
            if self._pending and self._linger > 0:
                await asyncio.sleep(self._linger)  # let the frames behind this one join it
            self._more.clear()
            if self._pending:
                batch, self._pending = self._pending, []
                await self._write(batch, self._since)
            if not self._pending:
                self._idle.set()
            if loop.time() - last > idle_every:
                last = loop.time()
                await on_idle()


class _Waiter:
    """One follower of a task: its wake-up, and the oldest publication stamp announced
    since its last read (0: none)."""

    __slots__ = ("event", "published")

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.published = 0.0


class Wakeups:
    """Followers waiting for news of a task, woken by the backend's notifications."""

    def __init__(self) -> None:
        self._waiters: dict[str, list[_Waiter]] = {}

    def wake(self, task_id: str, published: float = 0.0) -> None:
        """News of ``task_id``: a batch of frames stamped ``published`` (0: unknown)."""
        for waiter in self._waiters.get(task_id, ()):
            waiter.event.set()
            if published and (not waiter.published or published < waiter.published):
                waiter.published = published

    async def follow(
        self,
        task_id: str,
        after: int,
        read: Callable[[str, int], Awaitable[list[tuple[int, StreamFrame]]]],
        lag: Callable[[float], None],
    ) -> AsyncIterator[tuple[int, StreamFrame]]:
        """Read what is new each time the task is woken (or every :data:`POLL` s); when a
        read after a stamped wake-up brought frames, ``lag(seconds)`` once they have been
        handed on (a wake-up whose frames an earlier read took is not counted)."""
        waiter = _Waiter()
        self._waiters.setdefault(task_id, []).append(waiter)
        try:
            while True:
                waiter.event.clear()
                published, waiter.published = waiter.published, 0.0
                found = False
                for seq, frame in await read(task_id, after):
                    if seq > after:
                        after = seq
                        found = True
                        yield seq, frame
                if found and published:
                    lag(time.time() - published)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.event.wait(), POLL)
        finally:
            waiting = self._waiters.get(task_id, [])
            if waiter in waiting:
                waiting.remove(waiter)
            if not waiting:
                self._waiters.pop(task_id, None)


async def dispatch(on_command: OnCommand | None, verb: str, task_id: str) -> None:
    if on_command is None:
        return
    try:
        outcome = on_command(verb, task_id)
        if outcome is not None:
            await outcome
    except Exception:  # a command must never take the listener down
        logger.exception("replica command %s %s failed", verb, task_id)
