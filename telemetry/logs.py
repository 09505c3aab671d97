"""Log lines: plain text for a terminal (the default), or one JSON object per line
(``--log-format json``) carrying the trace, the task and the transport of the request
they were written for.

A request's identifiers are known at different places: the trace id once the runner
opens the SERVER span, the task id once the door has made one. They meet in one
:class:`LogFields` per request, set by the server's access-log middleware
(:func:`request_fields`) and filled in by the runner (:func:`note_run`); the span, the task
id and the transport reach every line written while that request is served, including the
access line written after it, because the fields object is shared by the tasks the
request starts (they copy the context, not the object).

Nothing here reads a body or a header: a line holds what the code that writes it passes,
never a credential.
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import time
from collections.abc import Mapping
from typing import Any, Final

from opentelemetry import trace
from opentelemetry.trace import SpanContext

LOG_FORMATS: Final = ("text", "json")
#: The logger of the one line per request (``--access-log``).
ACCESS_LOGGER: Final = "trpc_bridge.access"
#: ``extra`` key of a record's structured fields (each becomes a key of the JSON line).
FIELDS: Final = "fields"


class LogFields:
    """What is known of the request being served (empty strings: not known)."""

    __slots__ = ("span_id", "task_id", "trace_id", "transport")

    def __init__(self, transport: str = "") -> None:
        self.trace_id = ""
        self.span_id = ""
        self.task_id = ""
        self.transport = transport


_REQUEST: contextvars.ContextVar[LogFields | None] = contextvars.ContextVar(
    "trpc_bridge_log_fields", default=None
)


def request_fields(transport: str = "") -> tuple[LogFields, contextvars.Token[LogFields | None]]:
    """New fields for the request about to be served, current until the token is reset."""
    fields = LogFields(transport)
    return fields, _REQUEST.set(fields)


def reset_request_fields(token: contextvars.Token[LogFields | None]) -> None:
    _REQUEST.reset(token)


def note_run(span: SpanContext | None, *, task_id: str = "", transport: str = "") -> None:
    """The runner's part: the run's SERVER span, task and transport, for the lines of the
    request that started it (nothing when no request is being logged)."""
    fields = _REQUEST.get()
    if fields is None:
        return
    if span is not None:
        fields.trace_id = f"{span.trace_id:032x}"
        fields.span_id = f"{span.span_id:016x}"
    if task_id:
        fields.task_id = task_id
    if transport:
        fields.transport = transport


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ``time`` (UTC, RFC 3339), ``level``, ``logger``,
    ``message``; ``trace_id`` / ``span_id`` (the current span, else the request's run),
    ``task_id`` and ``transport`` where known; the record's ``fields``; ``exception``."""

    def format(self, record: logging.LogRecord) -> str:
        seconds = int(record.created)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        document: dict[str, Any] = {
            "time": f"{stamp}.{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request = _REQUEST.get()
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            document["trace_id"] = f"{span.trace_id:032x}"
            document["span_id"] = f"{span.span_id:016x}"
        elif request is not None and request.trace_id:
            document["trace_id"] = request.trace_id
            document["span_id"] = request.span_id
        if request is not None:
            if request.task_id:
                document["task_id"] = request.task_id
            if request.transport:
                document["transport"] = request.transport
        fields = record.__dict__.get(FIELDS)
        if isinstance(fields, Mapping):
            document.update(fields)
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            document["exception"] = record.exc_text
        return json.dumps(document, ensure_ascii=False, default=str)


_TEXT_FORMAT = "%(message)s"
_json_lines = False


def json_lines() -> bool:
    """Whether :func:`setup_logging` chose JSON: a server then leaves uvicorn's loggers to
    the root handler instead of installing uvicorn's own plain-text ones."""
    return _json_lines


def setup_logging(log_format: str = "text", *, access_log: bool = False) -> None:
    """Configure the process's log lines on stderr.

    ``text`` keeps Python's plain lines (the message alone, warnings and up), adding the
    access lines when ``access_log``; ``json`` writes every line as JSON, the bridge's
    own from INFO (so the access lines) and other libraries' from WARNING.
    """
    global _json_lines
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format {log_format!r}: use {' or '.join(LOG_FORMATS)}")
    _json_lines = log_format == "json"
    access = logging.getLogger(ACCESS_LOGGER)
    access.setLevel(logging.INFO if access_log else logging.WARNING)
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
        root = logging.getLogger()
        for old in list(root.handlers):
            root.removeHandler(old)
        root.addHandler(handler)
        root.setLevel(logging.WARNING)
        logging.getLogger("trpc_bridge").setLevel(logging.INFO)
        return
    if access_log:  # only the access lines need a handler: the rest keeps Python's default
        handler.setFormatter(logging.Formatter(_TEXT_FORMAT))
        access.addHandler(handler)
        access.propagate = False
