"""Graceful shutdown (SIGTERM, Ctrl-C): stop taking work, let running tasks finish for a
grace period, then end each one with a final status frame.

The caller of :func:`drain` has already stopped accepting connections and new runs. Every
task still running after ``grace`` seconds (or at once, after a second signal) is
interrupted: its stream gets a ``failed`` status with an ``interrupted`` error, stored
first like any end of a run, and closes normally, so no client sees a cut connection
without knowing how its task ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from trpc_bridge.server.tasks.interruption import SHUTDOWN
from trpc_bridge.server.tasks.registry import TaskRegistry

logger = logging.getLogger(__name__)

#: Seconds an interrupted task gets to store and send its final frame.
_FINAL_FRAME_WAIT = 5.0


async def drain(registry: TaskRegistry, grace: float, force: asyncio.Event) -> None:
    registry.closing = True
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while registry.running() and loop.time() < deadline and not force.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(force.wait(), min(0.05, max(0.0, deadline - loop.time())))
    left = registry.running()
    if not left:
        return
    logger.warning("shutting down: interrupting %d running task(s)", len(left))
    registry.interrupt_all(SHUTDOWN)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(
            asyncio.gather(*(live.wait() for live in left), return_exceptions=True),
            _FINAL_FRAME_WAIT,
        )
