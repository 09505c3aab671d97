"""ACP's wire: JSON-RPC 2.0, one message per line (newline-delimited JSON), read strictly.

Every line the client sends gets what JSON-RPC 2.0 §5 asks for, and the door keeps
serving whatever came before or after:

========================================================  ===================================
the line                                                  answer
========================================================  ===================================
not UTF-8, not JSON, ``NaN``, nested too deep to parse    ``-32700`` Parse error, ``id`` null
(the reader of every door, :mod:`~trpc_bridge.json_body`)
JSON, but not a message: not an object, an ``id`` or       ``-32600`` Invalid Request, ``id`` null
``method`` of the wrong type, neither a call nor a
response
longer than :data:`MAX_MESSAGE_BYTES` (nothing past the   ``-32600`` Invalid Request, ``id`` null
bound is kept)
a request (``method`` and ``id``)                         the handler's result or error
a notification (``method``, no ``id``)                    nothing (the handler runs)
a response (no ``method``)                                nothing: the door asks the client
                                                          nothing it waits for
========================================================  ===================================

The ``agent-client-protocol`` package's own reader logs such a line with a traceback and
answers nothing, so a client waiting on that id would wait for ever. Requests run
concurrently (``session/cancel`` arrives while ``session/prompt`` runs); the handler gets
each request's id (E2A echoes it as ``jsonrpc_id``). A handler error that is not an ACP
``RequestError`` is the door's own bug: logged with its traceback, answered ``-32603``
"internal error" without Python's text.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from acp import RequestError
from pydantic import ValidationError

from trpc_bridge.json_body import BodyError, parse_json

logger = logging.getLogger(__name__)

#: Largest ACP message read (a prompt with images or embedded files can be large).
MAX_MESSAGE_BYTES = 50 * 1024 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603

#: A JSON-RPC id: a string, an integer or null (JSON-RPC 2.0: numbers SHOULD NOT have
#: fractional parts; E2A's ``jsonrpc_id`` takes none).
RequestId = str | int | None
#: ``(method, params, id, notification)`` → the result of a request.
Handler = Callable[[str, Any, RequestId, bool], Awaitable[Any]]


@dataclass(frozen=True)
class LineFault:
    """The error answer to a line that is no JSON-RPC message."""

    code: int
    message: str

    def response(self) -> dict[str, Any]:
        error = {"code": self.code, "message": self.message}
        return {"jsonrpc": "2.0", "id": None, "error": error}


def read_message(line: bytes) -> dict[str, Any] | LineFault:
    """One line as a JSON-RPC message (an object whose ``id``, if any, is one and whose
    ``method``, if any, is text), or the fault to answer it with."""
    try:
        message = parse_json(line)
    except BodyError as exc:
        return LineFault(PARSE_ERROR, f"Parse error: {exc}")
    if not isinstance(message, dict):
        kind = "a batch" if isinstance(message, list) else "not an object"
        return LineFault(INVALID_REQUEST, f"Invalid Request: the message is {kind}")
    request_id = message.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
        return LineFault(
            INVALID_REQUEST, "Invalid Request: 'id' must be a string, an integer or null"
        )
    method = message.get("method")
    if method is None and not ("id" in message and ("result" in message or "error" in message)):
        return LineFault(INVALID_REQUEST, "Invalid Request: neither a call nor a response")
    if method is not None and not isinstance(method, str):
        return LineFault(INVALID_REQUEST, "Invalid Request: 'method' must be a string")
    return message


_TOO_LONG = LineFault(
    INVALID_REQUEST, f"Invalid Request: a message longer than {MAX_MESSAGE_BYTES} bytes"
)


class JsonRpcLines:
    """One ACP connection: ``reader`` / ``writer`` (stdin / stdout, or any stream pair),
    whose reader was made with ``limit=MAX_MESSAGE_BYTES``."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._running: set[asyncio.Task[None]] = set()

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification to the client."""
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def serve(self, handler: Handler) -> None:
        """Answer the client's messages with ``handler`` until it closes its end; what
        still runs then is cancelled."""
        try:
            while (line := await self._next_line()) is not None:
                if isinstance(line, LineFault):
                    await self._send(line.response())
                elif line.strip():
                    await self._dispatch(line, handler)
        finally:
            for task in list(self._running):
                task.cancel()
            await asyncio.gather(*self._running, return_exceptions=True)

    async def _next_line(self) -> bytes | LineFault | None:
        """The next line (without its newline), :data:`_TOO_LONG` for one past the bound
        (dropped as it comes), ``None`` at the end of the stream."""
        try:
            return (await self._reader.readuntil(b"\n"))[:-1]
        except asyncio.IncompleteReadError as exc:  # the last line, without a newline
            return exc.partial if exc.partial.strip() else None
        except asyncio.LimitOverrunError:
            pass
        while True:  # drop the rest of the long line
            try:
                await self._reader.readuntil(b"\n")
                return _TOO_LONG
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return _TOO_LONG

    async def _dispatch(self, line: bytes, handler: Handler) -> None:
        message = read_message(line)
        if isinstance(message, LineFault):
            await self._send(message.response())
            return
        method = message.get("method")
        if method is None:
            return  # a response: the door sends no requests of its own
        task = asyncio.create_task(self._run(message, handler))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _run(self, message: dict[str, Any], handler: Handler) -> None:
        notification = "id" not in message
        request_id = message.get("id")
        method, params = message["method"], message.get("params")
        try:
            result = await handler(method, params, request_id, notification)
        except RequestError as exc:
            answer: dict[str, Any] = {"error": exc.to_error_obj()}
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_input=False, include_context=False)
            answer = {"error": RequestError.invalid_params({"errors": errors}).to_error_obj()}
        except Exception:
            logger.exception("ACP %s failed", str(method)[:80])
            answer = {"error": {"code": INTERNAL_ERROR, "message": "Internal error"}}
        else:
            answer = {"result": result}
        if not notification:
            await self._send({"jsonrpc": "2.0", "id": request_id, **answer})

    async def _send(self, message: dict[str, Any]) -> None:
        self._writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        with contextlib.suppress(ConnectionError):  # the client has gone: nothing to tell
            await self._writer.drain()
