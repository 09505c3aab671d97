"""The event loop the serving commands run on: uvloop when it is installed (a dependency
on Linux and macOS), else asyncio's own; ``TRPC_BRIDGE_LOOP=asyncio`` forces asyncio's.

uvloop is what uvicorn itself picks when it is installed (``--loop auto``). For the
bridge it removes about 11 % of the instructions of a unary ``message/send`` and more of
a stream's per-frame cost (transport writes, callbacks): ``bench/vs_go.py`` measures the
servers as started here. :class:`~trpc_bridge.server.BridgeServer` itself runs on
whatever loop it is started on.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any

#: Environment variable: ``asyncio`` (asyncio's loop), ``uvloop`` (required) or ``auto``.
LOOP_ENV = "TRPC_BRIDGE_LOOP"


class LoopError(ValueError):
    """``TRPC_BRIDGE_LOOP`` names a loop that cannot be used."""


def loop_factory(choice: str | None = None) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop factory, or ``None`` for asyncio's default; ``choice`` defaults to
    ``$TRPC_BRIDGE_LOOP`` (``auto``)."""
    choice = (choice if choice is not None else os.environ.get(LOOP_ENV, "auto")).strip().lower()
    if choice not in ("auto", "uvloop", "asyncio", ""):
        raise LoopError(f"{LOOP_ENV}={choice!r}: use auto, uvloop or asyncio")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise LoopError(f"{LOOP_ENV}=uvloop but uvloop is not installed") from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, None]) -> None:
    """``asyncio.run(main)`` on the loop :func:`loop_factory` chooses."""
    try:
        factory = loop_factory()
    except LoopError:
        main.close()  # never started: no "never awaited" warning
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(main)
