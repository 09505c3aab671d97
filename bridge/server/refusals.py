"""One log line per refused request, rate-limited; tracebacks only for the server's bugs.

Every answer that refuses a client's request — an HTTP 4xx, a JSON-RPC error other than
``-32603``, a JSON-RPC notification left unanswered, a gRPC status other than OK,
CANCELLED, UNKNOWN or INTERNAL — is logged once, as one line on the
``trpc_bridge.refused`` logger::

    refused POST / from 127.0.0.1:50312: JSON-RPC -32700 Parse error: body is not valid UTF-8 …

The lines are observed where the answer leaves (:class:`RefusalLog` for HTTP, the gRPC
screen for gRPC), so whoever decided the error (a screen, a2a-sdk, the handler) needs no
logging of its own. a2a-sdk's own reports of client errors (warnings, one or two per bad
request) are dropped by :func:`install_refusal_logging`; its ERROR records stay: after
the screens, an error it logs is the server's own bug.

:class:`RateLimit` bounds the lines (a burst, then a steady rate): a flood of bad
requests cannot flood the log, and the next line says how many were left out. uvicorn's
own per-request warnings (malformed HTTP, the concurrency limit) share the same budget.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("trpc_bridge.refused")

#: a2a-sdk loggers that report client errors below ERROR, each already logged here.
_SDK_LOGGERS = (
    "a2a.utils.error_handlers",
    "a2a.utils.version_validator",
    "a2a.server.routes.jsonrpc_dispatcher",
)
_SHOWN = 200
_INTERNAL_ERROR = -32603


class RateLimit(logging.Filter):
    """Passes at most ``burst`` records at once, refilled at ``per_second``; records at
    ERROR and above always pass. A record that passes after some were dropped says how
    many."""

    def __init__(self, *, burst: int = 20, per_second: float = 5.0) -> None:
        super().__init__()
        self.burst = burst
        self.per_second = per_second
        self._tokens = float(burst)
        self._at = time.monotonic()
        self._dropped = 0
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return True
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.per_second)
            self._at = now
            if self._tokens < 1:
                self._dropped += 1
                return False
            self._tokens -= 1
            dropped, self._dropped = self._dropped, 0
        if dropped:
            record.msg = f"{record.getMessage()} ({dropped} more not logged)"
            record.args = None
        return True


class _BelowError(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR


#: The budget every refusal line (and uvicorn's per-request warnings) draws on.
LIMIT = RateLimit()
_installed = False


def install_refusal_logging() -> None:
    """Rate-limit the refusal lines and uvicorn's per-request warnings; drop a2a-sdk's
    duplicate client-error reports. Idempotent (the filters are process-wide)."""
    global _installed
    if _installed:
        return
    _installed = True
    log.addFilter(LIMIT)
    logging.getLogger("uvicorn.error").addFilter(LIMIT)
    for name in _SDK_LOGGERS:
        logging.getLogger(name).addFilter(_BelowError())


def clean(text: str) -> str:
    """A client-influenced text made safe for one log line: no control characters, short."""
    printable = "".join(c if c.isprintable() else "?" for c in text[: _SHOWN + 1])
    return printable if len(printable) <= _SHOWN else printable[: _SHOWN - 1] + "…"


def log_refusal(request: str, client: str, answer: str) -> None:
    """``request`` (``POST /``, ``gRPC /lf.a2a.v1.A2AService/GetTask``) from ``client``
    was refused with ``answer``."""
    log.warning("refused %s from %s: %s", request, client, clean(answer))


def _answer(status: int, body: bytes, *, jsonrpc: bool) -> str:
    """What a response refused, or empty when it refused nothing (or failed on the
    server's side: that is logged with its traceback where it happened)."""
    if status == 204 and jsonrpc:
        return "JSON-RPC notification (no id): not run, no answer"
    if status >= 500 or (status < 400 and not jsonrpc):
        return ""
    if jsonrpc and status < 400 and b'"error"' not in body:
        return ""
    try:
        document = json.loads(body)
    except ValueError:
        return f"HTTP {status}" if status >= 400 else ""
    error = document.get("error") if isinstance(document, dict) else None
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message", "")
        if status < 400:
            return "" if code == _INTERNAL_ERROR else f"JSON-RPC {code} {message}"
        return f"HTTP {status} {error.get('status', '')} {message}".replace("  ", " ")
    if status >= 400:
        return f"HTTP {status} {error if isinstance(error, str) else ''}".rstrip()
    return ""


class RefusalLog:
    """ASGI middleware: one refusal line per refused HTTP request (see the module doc).
    ``jsonrpc_paths`` answer errors with HTTP 200 and a JSON-RPC error object."""

    def __init__(self, app: ASGIApp, *, jsonrpc_paths: Iterable[str]) -> None:
        self.app = app
        self.jsonrpc_paths = frozenset(jsonrpc_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        jsonrpc = scope["path"] in self.jsonrpc_paths
        status = 0
        watching = False

        async def observed(message: Message) -> None:
            nonlocal status, watching
            if message["type"] == "http.response.start":
                status = message["status"]
                media = b""
                for name, value in message.get("headers", ()):  # the last one counts
                    if name == b"content-type":
                        media = value
                watching = status >= 400 or (jsonrpc and media.startswith(b"application/json"))
                watching = watching or (jsonrpc and status == 204)
            elif message["type"] == "http.response.body" and watching:
                watching = False  # errors are small: their first chunk is all of them
                answer = _answer(status, message.get("body", b""), jsonrpc=jsonrpc)
                if answer:
                    client = scope.get("client") or ("?", 0)
                    request = f"{scope['method']} {scope['path']}"
                    log_refusal(request, f"{client[0]}:{client[1]}", answer)
            await send(message)

        await self.app(scope, receive, observed)
