"""The meters of one served run (:class:`RunMeter`) and of one call to a remote agent
(:class:`ClientCallMeter`): what they note per event is a few attribute reads and
counters (the hot path of every stream), and what they record goes to a
:class:`RunRecorder` once, when the run or call ends
(:class:`~trpc_bridge.telemetry.metrics.BridgeMetrics` is the one there is)."""

from __future__ import annotations

from time import perf_counter
from typing import Final, Protocol

from opentelemetry.semconv.attributes import error_attributes
from opentelemetry.util.types import AttributeValue

from trpc_bridge.events import AgentEvent, ErrorType

Attributes = dict[str, AttributeValue]
#: A run's attribute set: agent name, transport, wire version, encoding.
RunKey = tuple[str, str, str, str]

#: How a run (a push delivery, a store call) ended: the ``trpc_bridge.outcome`` values.
OUTCOME_OK: Final = "ok"
OUTCOME_ERROR: Final = "error"
OUTCOME_CANCELLED: Final = "cancelled"

#: The conventions' value for anything outside a closed set of attribute values.
OTHER: Final = "_OTHER"
#: ``error.type`` values a run may carry; anything else an agent invents is ``_OTHER``
#: (an agent's error type is its own string: not a bounded set).
_KNOWN_ERRORS = frozenset({ErrorType.FLOW, ErrorType.RUN, ErrorType.API, ErrorType.STOP_AGENT})


def error_type(value: str) -> str:
    """``value`` when it is one of the known run error types, else ``_OTHER``."""
    return value if value in _KNOWN_ERRORS else OTHER


class RunRecorder(Protocol):
    """Where the meters record a run or a call once it ended."""

    def events_written(self, key: RunKey, attributes: Attributes, count: int) -> None: ...

    def tokens_used(
        self, attributes: Attributes, input_tokens: int, output_tokens: int
    ) -> None: ...

    def run_ended(
        self, key: RunKey, attributes: Attributes, outcome: str, error: str, seconds: float
    ) -> None: ...

    def first_tokens(
        self, key: RunKey, attributes: Attributes, to_first: float, per_token: float | None
    ) -> None: ...

    def client_ended(self, attributes: Attributes, seconds: float) -> None: ...


#: What a text delta the proxy relayed counts as (:meth:`RunMeter.relayed`).
_RELAYED_DELTA = AgentEvent.text_delta(" ", "")


class RunMeter:
    """One served run: :meth:`observe` every event (cheap), :meth:`end` once.

    The time to first token is the time to the run's first content or reasoning delta; the
    time per output token is the mean gap between its deltas after the first (one value
    per run, as the GenAI conventions define it), both for streamed runs that did not
    fail: a unary call's caller sees nothing before the end, and leaving them out keeps a
    unary request at two histogram records (``bench/metrics.py``).
    """

    __slots__ = (
        "_attributes",
        "_deltas",
        "_done",
        "_error",
        "_events",
        "_first",
        "_input_tokens",
        "_key",
        "_last",
        "_metrics",
        "_output_tokens",
        "_started",
        "_streamed",
        "_tokens",
    )

    def __init__(
        self,
        metrics: RunRecorder,
        key: RunKey,
        attributes: Attributes,
        *,
        streamed: bool,
        tokens: bool,
        started: float | None = None,
    ) -> None:
        self._metrics = metrics
        self._key = key
        self._attributes = attributes
        self._streamed = streamed
        self._tokens = tokens
        self._started = perf_counter() if started is None else started
        self._first = 0.0
        self._last = 0.0
        self._deltas = 0
        self._events = 0
        self._input_tokens = 0
        self._output_tokens = 0
        self._error = ""
        self._done = False

    def observe(self, event: AgentEvent) -> None:
        self._events += 1
        if event.done:
            self._done = True
        if event.is_partial:  # most events of a stream: a delta, no usage counted
            if self._streamed and event.choices:
                delta = event.choices[0].delta
                if delta.content or delta.reasoning_content:
                    # Inline, not a method: this runs for every delta of a stream.
                    now = perf_counter()
                    if not self._deltas:
                        self._first = now
                    self._last = now
                    self._deltas += 1
        elif (usage := event.usage) is not None and self._tokens:
            self._input_tokens += usage.prompt_tokens
            self._output_tokens += usage.completion_tokens
        error = event.error
        if error is not None and event.is_terminal_error():
            self._error = error_type(error.type)

    def relayed(self, *, text: bool = True) -> None:
        """What :meth:`observe` notes of a streamed text delta the proxy relayed without
        making it an event (``server/proxying``); ``text=False``: of an update without
        content (a partial event without text or error: one event, nothing else)."""
        if text:
            self.observe(_RELAYED_DELTA)
        else:
            self._events += 1

    def end(self, *, cancelled: bool = False) -> None:
        """Record the run; ``cancelled``: it was stopped before its end (a consumer that
        stops reading after a final event, ``done``, has not cancelled anything)."""
        cancelled = cancelled and not self._done
        metrics = self._metrics
        elapsed = perf_counter() - self._started
        attributes = self._attributes
        if self._events:
            metrics.events_written(self._key, attributes, self._events)
        if self._input_tokens or self._output_tokens:
            metrics.tokens_used(attributes, self._input_tokens, self._output_tokens)
        if self._error:
            metrics.run_ended(self._key, attributes, OUTCOME_ERROR, self._error, elapsed)
            return
        if cancelled:
            metrics.run_ended(self._key, attributes, OUTCOME_CANCELLED, "", elapsed)
            return
        if self._deltas:
            per_delta = None
            if self._deltas > 1:
                per_delta = (self._last - self._first) / (self._deltas - 1)
            metrics.first_tokens(self._key, attributes, self._first - self._started, per_delta)
        metrics.run_ended(self._key, attributes, OUTCOME_OK, "", elapsed)


class ClientCallMeter:
    """One call to a remote agent: :meth:`observe` every event, :meth:`end` once. The
    tokens the remote agent reports (``AgentEvent.usage`` decoded from the wire) are
    recorded here, once per call, with the call's attributes."""

    __slots__ = (
        "_attributes",
        "_error",
        "_input_tokens",
        "_metrics",
        "_output_tokens",
        "_started",
    )

    def __init__(
        self, metrics: RunRecorder, attributes: Attributes, started: float | None = None
    ) -> None:
        self._metrics = metrics
        self._attributes = attributes
        self._started = perf_counter() if started is None else started
        self._error = ""
        self._input_tokens = 0
        self._output_tokens = 0

    def observe(self, event: AgentEvent) -> None:
        usage = event.usage
        if usage is not None and not event.is_partial:
            self._input_tokens += usage.prompt_tokens
            self._output_tokens += usage.completion_tokens
        error = event.error
        if error is not None and event.is_terminal_error():
            self._error = error_type(error.type)

    def end(self) -> None:
        attributes = self._attributes
        if self._input_tokens or self._output_tokens:
            self._metrics.tokens_used(attributes, self._input_tokens, self._output_tokens)
        if self._error:
            attributes = {**attributes, error_attributes.ERROR_TYPE: self._error}
        self._metrics.client_ended(attributes, perf_counter() - self._started)
