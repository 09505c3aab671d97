"""Bridge servers and proxies for the frameworks matrix, in one background event loop of
the test process: a ``trpc-bridge`` process takes seconds to start on a loaded 2-core
machine, and the matrix needs one per scenario and per proxied upstream. They are the
same ``BridgeServer`` / ``RemoteAgent`` objects ``trpc-bridge serve`` and ``proxy`` run
(the Go matrix keeps starting real ``trpc-bridge`` processes)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from trpc_bridge.agent import Agent
from trpc_bridge.client import RemoteAgent
from trpc_bridge.server import BridgeServer, ServerOptions

T = TypeVar("T")


class BridgeThread:
    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._stack = contextlib.AsyncExitStack()

    def _run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 120.0) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def serve(self, agent: Agent, options: ServerOptions | None = None) -> str:
        """Serve ``agent`` on free loopback ports; returns its base URL."""

        async def start() -> str:
            server = await self._stack.enter_async_context(
                BridgeServer(agent, options or ServerOptions())
            )
            return server.base_url.rstrip("/") + "/"

        return self._run(start())

    def proxy(self, upstream: str, options: ServerOptions | None = None) -> str:
        """``trpc-bridge proxy --upstream URL``; returns the proxy's base URL."""

        async def start() -> str:
            remote = await self._stack.enter_async_context(await RemoteAgent.connect(upstream))
            server = await self._stack.enter_async_context(
                BridgeServer(remote, options or ServerOptions())
            )
            return server.base_url.rstrip("/") + "/"

        return self._run(start())

    def close(self) -> None:
        self._run(self._stack.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
