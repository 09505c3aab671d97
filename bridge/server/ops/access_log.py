"""One ASGI middleware for what an operator reads about HTTP requests: the access line
(method, path, status, duration, bytes in and out; ``--access-log``), the
``http.server.request.duration`` histogram and the open Server-Sent Event streams.

It sits outside every other middleware, so refused requests are counted and logged too.
The line holds no body, no query string (it may carry a credential) and no header; the
path is cleaned like every client-influenced text in a log line. It is written when the
response has ended, with the trace, task and transport the runner noted for the request
(:func:`~trpc_bridge.telemetry.logs.note_run`). Installed only when there is something to
do (metrics on or the access log asked for): off, requests do not pass through it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Iterable
from time import perf_counter

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from trpc_bridge.names import TRANSPORT_REST
from trpc_bridge.server.refusals import clean
from trpc_bridge.telemetry.logs import ACCESS_LOGGER, FIELDS, request_fields, reset_request_fields
from trpc_bridge.telemetry.metrics import BridgeMetrics

access = logging.getLogger(ACCESS_LOGGER)

_EVENT_STREAM = b"text/event-stream"


class ObservedRequests:
    """See the module doc. ``transports`` maps the paths of non-REST doors (JSON-RPC,
    AG-UI) to their transport name, for the streams count and the log lines."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        metrics: BridgeMetrics | None,
        access_log: bool,
        transports: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.access_log = access_log
        self.transports = dict(transports)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = perf_counter()
        metrics = self.metrics
        logged = self.access_log
        path: str = scope["path"]
        status = 0
        sent = 0
        received = 0
        stream = ""  # the transport of an open event stream

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
            return message

        def observed(message: Message) -> Awaitable[None]:
            # Called per message of a stream, so kept light: the start is looked at once, a
            # body's size counted only for the access line, and ``send``'s own awaitable
            # handed back (the caller awaits it) rather than awaited in a coroutine of its own.
            nonlocal status, sent, stream
            if message["type"] == "http.response.start":
                status = message["status"]
                for name, value in message.get("headers", ()):
                    if name == b"content-type" and value.startswith(_EVENT_STREAM):
                        stream = self.transports.get(path, TRANSPORT_REST)
                        if metrics is not None:
                            metrics.stream_opened(stream)
            elif logged:
                sent += len(message.get("body", b""))
            return send(message)

        # A log line names the door when the path tells it (the runner names a run's).
        token = request_fields(self.transports.get(path, ""))[1] if logged else None
        try:
            await self.app(scope, counted if logged else receive, observed)
        finally:
            elapsed = perf_counter() - started
            method: str = scope["method"]
            if metrics is not None:
                if stream:
                    metrics.stream_closed(stream)
                metrics.http_request(method, status or 500, elapsed, scope.get("scheme", "http"))
            if token is not None:
                client = scope.get("client") or ("", 0)
                _log(method, path, status, elapsed, received, sent, client[0])
                reset_request_fields(token)


def _log(
    method: str, path: str, status: int, seconds: float, received: int, sent: int, client: str
) -> None:
    shown = clean(path)
    access.info(
        "%s %s %d %.1f ms %d B in %d B out",
        method,
        shown,
        status,
        seconds * 1000,
        received,
        sent,
        extra={
            FIELDS: {
                "http.request.method": method,
                "url.path": shown,
                "http.response.status_code": status,
                "duration_ms": round(seconds * 1000, 3),
                "http.request.body.size": received,
                "http.response.body.size": sent,
                "client.address": client,
            }
        },
    )
