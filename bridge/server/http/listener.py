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
import ssl
from collections.abc import AsyncIterator, Iterator, Sequence

import uvicorn
from starlette.types import ASGIApp

from trpc_bridge.server.http.connection import http_protocol
from trpc_bridge.server.options import Limits
from trpc_bridge.telemetry.logs import json_lines


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
        try:
            self._socket.bind((host, port))
            # Listen now, not when uvicorn starts: a bound but idle socket lets another
            # SO_REUSEADDR socket (gRPC's) bind the same port and take it first.
            self._socket.listen(socket.SOMAXCONN)
        except OSError as exc:
            self._socket.close()
            raise port_error(host, port, "HTTP", exc) from None
        self.port: int = self._socket.getsockname()[1]
        self.scheme = "http"
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        """``http[s]://host:port`` (no trailing slash)."""
        return f"{self.scheme}://{self.host}:{self.port}"

    async def start(
        self,
        app: ASGIApp,
        *,
        log_level: str = "warning",
        header_timeout: float = Limits.header_timeout,
        keep_alive: int = Limits.keep_alive,
        max_connections: int = Limits.max_connections,
        max_header_bytes: int = Limits.max_header_bytes,
        max_header_lines: int = Limits.max_header_lines,
        tls: ssl.SSLContext | None = None,
        trusted_proxies: Sequence[str] = (),
    ) -> None:
        """Serve ``app``; returns once uvicorn accepts connections (re-raises a startup
        error instead of waiting for ever). A request head must arrive within
        ``header_timeout`` seconds and hold at most ``max_header_bytes`` bytes and
        ``max_header_lines`` header lines (else 431), an idle connection is closed after
        ``keep_alive``, and past ``max_connections`` open connections requests get HTTP
        503. ``tls``: serve HTTPS with this context. ``trusted_proxies`` (addresses or
        networks): peers whose ``X-Forwarded-For`` / ``-Proto`` name the client and scheme;
        for any other peer, and by default, they are the connection's own."""
        if tls is not None:
            self.scheme = "https"
        config = uvicorn.Config(
            app,
            log_level=log_level,
            # JSON log lines: uvicorn's records go to the root handler, as JSON too.
            log_config=None if json_lines() else uvicorn.config.LOGGING_CONFIG,
            lifespan="off",
            # The bridge logs requests itself (``--access-log``); uvicorn's lines sit below
            # ``log_level`` and would only cost each response its formatting arguments.
            access_log=False,
            # The connection's own peer address and scheme unless the owner names its
            # proxies: left alone, uvicorn takes them from X-Forwarded-For/-Proto for the
            # peers in the environment's FORWARDED_ALLOW_IPS, and with `*` any caller
            # could name itself (``docs/security.md``). An explicit list wins over it.
            proxy_headers=bool(trusted_proxies),
            forwarded_allow_ips=list(trusted_proxies) or None,
            timeout_graceful_shutdown=1,
            http=http_protocol(header_timeout, max_header_bytes, max_header_lines),
            timeout_keep_alive=keep_alive,
            limit_concurrency=max_connections,
            ssl_context_factory=None if tls is None else (lambda _config, _default: tls),
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
        # A task that already ended (uvicorn failed to start) was reported by start/wait.
        if self._server is not None and self._task is not None and not self._task.done():
            self._server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._socket.close()


def port_error(host: str, port: int, what: str, exc: OSError) -> OSError:
    """The one-line error for a port that cannot be listened on, naming the port."""
    reason = exc.strerror or str(exc)
    return OSError(f"cannot listen on {host}:{port} ({what}): {reason}")


def check_port_free(host: str, port: int, what: str) -> None:
    """Raise :func:`port_error` when ``port`` (not 0) is taken, before a server that would
    only log the failure (gRPC's core) tries it. Binds as gRPC does (SO_REUSEADDR), so a
    port in TIME_WAIT counts as free."""
    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise port_error(host, port, what, exc) from None


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
