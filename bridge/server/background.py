"""Stopping one of the server's background asyncio tasks (a writer loop, a retry loop, a
replica's watch, a run producer whose caller went away)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def cancel_and_wait(task: asyncio.Future[Any] | None) -> None:
    """Cancel ``task`` (None: nothing to stop) and wait until it has ended. Its
    cancellation is the expected end and is swallowed; an exception it had already ended
    with is raised here."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
