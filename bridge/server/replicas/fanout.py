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
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from trpc_bridge.codecs.encoding import StreamFrame

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


class Batches:
    """What a fan-out's streams delivered, sent by one writer task in batches: all that
    queued up while the previous batch was on its way, or within ``linger`` seconds of
    the first frame of a batch (:data:`LINGER`). ``write`` must not raise."""

    def __init__(
        self, write: Callable[[list[Any]], Awaitable[None]], *, linger: float = LINGER
    ) -> None:
        self._write = write
        self._linger = linger
        self._pending: list[Any] = []
        self._more = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()

    def add(self, item: Any) -> None:
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
                await self._write(batch)
            if not self._pending:
                self._idle.set()
            if loop.time() - last > idle_every:
                last = loop.time()
                await on_idle()


class Wakeups:
    """Followers waiting for news of a task, woken by the backend's notifications."""

    def __init__(self) -> None:
        self._events: dict[str, list[asyncio.Event]] = {}

    def wake(self, task_id: str) -> None:
        for event in self._events.get(task_id, ()):
            event.set()

    async def follow(
        self,
        task_id: str,
        after: int,
        read: Callable[[str, int], Awaitable[list[tuple[int, StreamFrame]]]],
    ) -> AsyncIterator[tuple[int, StreamFrame]]:
        """Read what is new each time the task is woken (or every :data:`POLL` s)."""
        event = asyncio.Event()
        self._events.setdefault(task_id, []).append(event)
        try:
            while True:
                event.clear()
                for seq, frame in await read(task_id, after):
                    if seq > after:
                        after = seq
                        yield seq, frame
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), POLL)
        finally:
            waiting = self._events.get(task_id, [])
            if event in waiting:
                waiting.remove(event)
            if not waiting:
                self._events.pop(task_id, None)


async def dispatch(on_command: OnCommand | None, verb: str, task_id: str) -> None:
    if on_command is None:
        return
    try:
        outcome = on_command(verb, task_id)
        if outcome is not None:
            await outcome
    except Exception:  # a command must never take the listener down
        logger.exception("replica command %s %s failed", verb, task_id)
