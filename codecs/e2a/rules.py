"""The rules across records (docs/specs/e2a.md §12.3), from both sides.

- :class:`ResponseSequencer` *writes* one request's responses so they cannot break them:
  ``sequence`` 0, 1, 2, … and exactly one ``is_final`` (after it, nothing more).
- :class:`StreamChecker` *reads* responses (of any number of interleaved requests) and
  raises :class:`E2ARuleError` at the first record that breaks them: a first sequence that
  is not 0, a gap or a step back, anything after the final record; :meth:`StreamChecker.finish`
  reports requests that ended without one.

A peer that dies mid-stream cannot send its final record (§12.3 allows that); the caller
decides, by timeout or connection state, whether to call :meth:`StreamChecker.finish`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from trpc_bridge.codecs.e2a.bodies import check_record
from trpc_bridge.codecs.e2a.constants import (
    DELTA_KINDS,
    KIND_CHUNK,
    KIND_COMPLETE,
    KIND_ERROR,
    RESPONSE_STATUSES,
    STATUS_FAILED,
    STATUS_IN_PROGRESS,
    STATUS_SUCCEEDED,
)
from trpc_bridge.codecs.e2a.errors import E2AFormatError, E2ARuleError
from trpc_bridge.codecs.e2a.models import E2AEnvelope, E2AProvenance, E2AResponse, utc_now
from trpc_bridge.names import new_hex_id

#: Envelope fields every response of the request echoes (docs/specs/e2a.md §12.4).
_ECHOED = (
    "jsonrpc_id",
    "correlation_id",
    "task_id",
    "context_id",
    "session_id",
    "is_stream",
    "channel",
    "user_id",
    "source_agent_id",
    "method",
)


class ResponseSequencer:
    """Builds the responses of one request, in order. Not thread-safe: one per request."""

    def __init__(
        self,
        envelope: E2AEnvelope | None = None,
        *,
        request_id: str | None = None,
        provenance: E2AProvenance | None = None,
        new_id: Callable[[], str] = new_hex_id,
        clock: Callable[[], str] = utc_now,
    ) -> None:
        rid = request_id or (envelope.request_id if envelope is not None else None)
        if not rid:
            raise E2AFormatError("an E2A response needs the request_id of its request")
        self.request_id = rid
        self._echo: dict[str, Any] = {}
        if envelope is not None:
            self._echo = {k: getattr(envelope, k) for k in _ECHOED}
        self._provenance = provenance or E2AProvenance()
        self._new_id = new_id
        self._clock = clock
        self._next = 0
        self.finished = False

    def emit(
        self,
        kind: str,
        body: Mapping[str, Any],
        *,
        status: str = STATUS_IN_PROGRESS,
        is_final: bool = False,
        message_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> E2AResponse:
        """The next record; raises :class:`E2ARuleError` after the final one."""
        if self.finished:
            raise E2ARuleError(f"request {self.request_id!r} already sent its final response")
        if status not in RESPONSE_STATUSES or not kind:
            raise E2AFormatError(f"invalid E2A response: status {status!r}, kind {kind!r}")
        check_record(status, kind, body)
        response = E2AResponse.model_validate(
            {
                **self._echo,
                "response_id": self._new_id(),
                "request_id": self.request_id,
                "sequence": self._next,
                "is_final": is_final,
                "status": status,
                "response_kind": kind,
                "timestamp": self._clock(),
                "provenance": self._provenance,
                "body": dict(body),
                "message_id": message_id,
                "metadata": dict(metadata or {}),
            }
        )
        self._next += 1
        self.finished = is_final
        return response

    def chunk(
        self, delta_kind: str, delta: Any, *, message_id: str | None = None, mime_type: str = ""
    ) -> E2AResponse:
        if delta_kind not in DELTA_KINDS:
            raise E2AFormatError(f"unknown delta_kind {delta_kind!r}")
        body: dict[str, Any] = {"delta_kind": delta_kind, "delta": delta}
        if mime_type:
            body["mime_type"] = mime_type
        return self.emit(KIND_CHUNK, body, message_id=message_id)

    def complete(self, result: Any) -> E2AResponse:
        return self.emit(KIND_COMPLETE, {"result": result}, status=STATUS_SUCCEEDED, is_final=True)

    def error(
        self, code: str | int, message: str, details: Mapping[str, Any] | None = None
    ) -> E2AResponse:
        body: dict[str, Any] = {"code": code, "message": message}
        if details:
            body["details"] = dict(details)
        return self.emit(KIND_ERROR, body, status=STATUS_FAILED, is_final=True)


class StreamChecker:
    """Checks the sequence / final rules over the responses of any number of requests.

    It remembers finished request ids so that a second final record is caught: the last
    ``remember`` of them, so that a long-lived checker (a wire log) stays bounded.
    """

    def __init__(self, *, remember: int = 10_000) -> None:
        self._next: dict[str, int] = {}
        self._finished: dict[str, None] = {}  # insertion-ordered: the oldest goes first
        self._remember = remember

    def check(self, response: E2AResponse) -> None:
        rid = response.request_id
        if rid in self._finished:
            what = "a second final response" if response.is_final else "a response"
            raise E2ARuleError(
                f"request {rid!r}: {what} (sequence {response.sequence}) after the final one"
            )
        expected = self._next.get(rid, 0)
        if response.sequence != expected:
            raise E2ARuleError(
                f"request {rid!r}: sequence {response.sequence}, expected {expected}"
                " (sequences go 0, 1, 2, … per request)"
            )
        if response.is_final:
            self._finished[rid] = None
            if len(self._finished) > self._remember:
                del self._finished[next(iter(self._finished))]
            self._next.pop(rid, None)
        else:
            self._next[rid] = expected + 1

    def open_requests(self) -> list[str]:
        """Requests seen without their final record yet."""
        return sorted(self._next)

    def finish(self) -> None:
        """For a stream that completed normally: every request must have had its final."""
        unfinished = self.open_requests()
        if unfinished:
            raise E2ARuleError(f"no final response for request(s) {', '.join(unfinished[:5])}")


def check_stream(responses: Iterable[E2AResponse]) -> None:
    """All of §12.3 for a complete, normally ended stream."""
    checker = StreamChecker()
    for response in responses:
        checker.check(response)
    checker.finish()
