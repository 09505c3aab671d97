"""One way to run an ASGI app under uvicorn on a socket bound first.

Binding first gives the real port (``port=0`` picks a free one) before the app exists,
so an agent card can name its own URL. Every HTTP server of the project — the bridge,
and the test and benchmark peers — starts through here, so they all get the
``TCP_NODELAY`` fix below.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Iterator

import uvicorn
from starlette.types import ASGIApp


class _NoSignals(uvicorn.Server):
    """uvicorn that leaves SIGINT / SIGTERM to its owner (graceful shutdown)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class HttpListener:
    """A bound TCP socket, then uvicorn serving an app on it until :meth:`stop`.
    ``signals=False``: uvicorn does not take SIGINT / SIGTERM (the owner handles them)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, signals: bool = True) -> None:
        self.host = host
        self._signals = signals
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit this; without it a pre-bound socket answers with
        # Nagle on, and each response waits ~40 ms for the client's delayed ACK.
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.bind((host, port))
        self.port: int = self._socket.getsockname()[1]
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        """``http://host:port`` (no trailing slash)."""
        return f"http://{self.host}:{self.port}"

    async def start(self, app: ASGIApp, *, log_level: str = "warning") -> None:
        """Serve ``app``; returns once uvicorn accepts connections (re-raises a startup
        error instead of waiting for ever)."""
        config = uvicorn.Config(
            app, log_level=log_level, lifespan="off", timeout_graceful_shutdown=1
        )
        self._server = (uvicorn.Server if self._signals else _NoSignals)(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        while not self._server.started:
            if self._task.done():
                await self._task
            await asyncio.sleep(0.01)

    def stop_accepting(self) -> None:
        """Close the listening socket; connections already open go on."""
        if self._server is not None:
            for server in self._server.servers:
                server.close()

    async def wait(self) -> None:
        """Until uvicorn stops serving (e.g. on Ctrl-C)."""
        if self._task is not None:
            await self._task

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._socket.close()


@contextlib.asynccontextmanager
async def serving(app: ASGIApp, *, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Serve ``app`` (on a free loopback port by default); yields the base URL, without a
    trailing slash. For an app that must know its URL first, use :class:`HttpListener`."""
    listener = HttpListener(host, port)
    await listener.start(app)
    try:
        yield listener.url
    finally:
        await listener.stop()
