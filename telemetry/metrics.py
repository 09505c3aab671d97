"""The bridge's metrics: OpenTelemetry instruments named by the GenAI, HTTP and RPC
semantic conventions where one fits, and the bridge's own (``trpc_bridge.*``) for the rest.

Every instrument lives on one :class:`BridgeMetrics` per meter provider
(:func:`metrics_for`). With no SDK provider installed (metrics off) :func:`metrics_for`
returns ``None`` and every hook in the server and client is one ``is None`` check.

What the hot paths pay with metrics on is kept to the end of a request or a run: a run's
events only bump counters and note the time of a delta in a :class:`RunMeter`
(attribute reads and a clock read), and the run's histograms are recorded once when it
ends; the number of running tasks is read by the exporter when it collects, never
counted per task. ``bench/metrics.py`` measures what is left.

Attributes are low-cardinality by construction: the agent's name, the transport, the
A2A wire version, the encoding, an outcome, an error type from a closed set. Never a
user, task, context or trace id: those belong to spans and log lines.
``docs/operations.md`` lists every metric with its unit and attributes.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from time import perf_counter
from typing import Final

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation

# The API's stand-in before a provider is set: records nothing (no public name for it).
from opentelemetry.metrics._internal import _ProxyMeterProvider
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv._incubating.attributes import rpc_attributes as rpc
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics, rpc_metrics
from opentelemetry.semconv.attributes import error_attributes, http_attributes, url_attributes
from opentelemetry.semconv.metrics import http_metrics
from opentelemetry.util.types import AttributeValue

from trpc_bridge.telemetry.histogram_records import BoundHistogram, HistogramRecords
from trpc_bridge.telemetry.run_meters import (
    OTHER,
    OUTCOME_ERROR,
    OUTCOME_OK,
    Attributes,
    ClientCallMeter,
    RunKey,
    RunMeter,
)
from trpc_bridge.telemetry.spans import (
    A2A_PROTOCOL_VERSION,
    A2A_TRANSPORT,
    OP_INVOKE_AGENT,
)
from trpc_bridge.version import __version__

#: Instrumentation scope of every instrument.
METER_NAME = "trpc_bridge"


# --- the bridge's own attribute keys -------------------------------------------------------
#: The wire encoding a run's events were written in (``trpc``, ``plain``, ``adk``, …,
#: ``agui`` for the AG-UI door).
ENCODING: Final = "trpc_bridge.encoding"
#: How a run, a push delivery or a store call ended (values below).
OUTCOME: Final = "trpc_bridge.outcome"
#: Which task-store call: the store's ``get``, ``save``, ``delete``, ``list``; the
#: journal's ``claim``, ``checkpoint``, ``release``.
STORE_OPERATION: Final = "trpc_bridge.task_store.operation"
#: Which fan-out backend carried a frame between replicas (``postgresql``, ``redis``).
FANOUT_BACKEND: Final = "trpc_bridge.fanout"

PUSH_DELIVERED: Final = "delivered"
PUSH_REFUSED: Final = "refused"
PUSH_FAILED: Final = "failed"

# --- the bridge's own metric names ---------------------------------------------------------
EVENTS: Final = "trpc_bridge.server.events"
ACTIVE_STREAMS: Final = "trpc_bridge.server.active_streams"
RUNNING_TASKS: Final = "trpc_bridge.tasks.running"
PUSH_DELIVERIES: Final = "trpc_bridge.push.deliveries"
FANOUT_LAG: Final = "trpc_bridge.replicas.fanout.lag"
STORE_DURATION: Final = "trpc_bridge.task_store.duration"

# Bucket boundaries: the semantic conventions' advice for the GenAI and HTTP histograms.
_REQUEST_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                    40.96, 81.92)  # fmt: skip
_TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
                 5.0, 7.5, 10.0)  # fmt: skip
_TPOT_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5)
_TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                  16777216, 67108864)  # fmt: skip
_HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)
#: Short store calls and replica lag: sub-millisecond to seconds.
_SHORT_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)

#: HTTP methods as the HTTP conventions list them; any other is ``_OTHER``.
_HTTP_METHODS = frozenset(
    {"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}
)


class BridgeMetrics:
    """Every instrument of the bridge on one meter provider (see the module doc)."""

    def __init__(self, provider: MeterProvider) -> None:
        meter = provider.get_meter(METER_NAME, __version__)
        self.request_duration = meter.create_histogram(
            gen_ai_metrics.GEN_AI_SERVER_REQUEST_DURATION,
            unit="s",
            description="Duration of an agent run served by the bridge, from its start to "
            "its last event.",
            explicit_bucket_boundaries_advisory=_REQUEST_BUCKETS,
        )
        self.time_to_first_token = meter.create_histogram(
            gen_ai_metrics.GEN_AI_SERVER_TIME_TO_FIRST_TOKEN,
            unit="s",
            description="Time from a run's start to its first content or reasoning delta "
            "(successful runs).",
            explicit_bucket_boundaries_advisory=_TTFT_BUCKETS,
        )
        self.time_per_output_token = meter.create_histogram(
            gen_ai_metrics.GEN_AI_SERVER_TIME_PER_OUTPUT_TOKEN,
            unit="s",
            description="Mean time between a run's streamed deltas after the first "
            "(successful runs with two deltas or more).",
            explicit_bucket_boundaries_advisory=_TPOT_BUCKETS,
        )
        self.token_usage = meter.create_histogram(
            gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE,
            unit="{token}",
            description="Input and output tokens of a run, as its events report them.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self.client_duration = meter.create_histogram(
            gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION,
            unit="s",
            description="Duration of a call to a remote agent (RemoteAgent, GrpcAgent, proxy).",
            explicit_bucket_boundaries_advisory=_REQUEST_BUCKETS,
        )
        self.http_duration = meter.create_histogram(
            http_metrics.HTTP_SERVER_REQUEST_DURATION,
            unit="s",
            description="Duration of HTTP server requests (streams: until the last byte).",
            explicit_bucket_boundaries_advisory=_HTTP_BUCKETS,
        )
        self.rpc_duration = meter.create_histogram(
            rpc_metrics.RPC_SERVER_DURATION,
            unit="ms",
            description="Duration of gRPC server calls (streams: until the last message).",
        )
        # Counts bumped on the hot path are plain dict entries here, read by the
        # exporter when it collects (observable instruments): a synchronous ``add`` costs
        # the SDK's attribute cleaning and hashing on every call.
        # Events are counted per run attribute set (its key), attributes kept beside.
        self._events: dict[RunKey, tuple[Attributes, int]] = {}
        self._streams: dict[str, int] = {}
        meter.create_observable_counter(
            EVENTS,
            callbacks=[self._observe_events],
            unit="{event}",
            description="Agent events written to callers, per encoding.",
        )
        meter.create_observable_up_down_counter(
            ACTIVE_STREAMS,
            callbacks=[self._observe_streams],
            unit="{stream}",
            description="Streaming responses open now (SSE and gRPC server streams).",
        )
        self.push_deliveries = meter.create_counter(
            PUSH_DELIVERIES,
            unit="{delivery}",
            description="Push notifications: delivered, refused by the receiver, or failed "
            "after every retry.",
        )
        self.fanout_lag_seconds = meter.create_histogram(
            FANOUT_LAG,
            unit="s",
            description="Time from a frame's publication on the replica that runs its task "
            "to its delivery to a follower on another replica (per batch: its oldest frame).",
            explicit_bucket_boundaries_advisory=_SHORT_BUCKETS,
        )
        self.store_duration = meter.create_histogram(
            STORE_DURATION,
            unit="s",
            description="Duration of task-store calls (database stores), by operation.",
            explicit_bucket_boundaries_advisory=_SHORT_BUCKETS,
        )
        self._running: dict[int, tuple[Mapping[str, AttributeValue], Callable[[], int]]] = {}
        self._lock = threading.Lock()
        meter.create_observable_up_down_counter(
            RUNNING_TASKS,
            callbacks=[self._observe_running],
            unit="{task}",
            description="Agent runs in progress on this process.",
        )
        # Each attribute set's histogram, bound once (``histogram_records.py``).
        self._records = HistogramRecords()
        self._http: dict[tuple[str, int, str], BoundHistogram] = {}
        #: A run's attributes, made once per attribute set; its duration's histogram
        #: with each outcome.
        self._run_attributes: dict[RunKey, Attributes] = {}
        self._ended: dict[tuple[RunKey, str, str], BoundHistogram] = {}
        # Operations and backends are a few fixed names: these stay small.
        self._store_attributes: dict[tuple[str, str], Attributes] = {}
        self._fanout_attributes: dict[str, Attributes] = {}

    # --- running tasks: read when the exporter collects ------------------------------------

    def watch_running(
        self, attributes: Mapping[str, AttributeValue], count: Callable[[], int]
    ) -> Callable[[], None]:
        """Report ``count()`` as the running tasks of ``attributes`` until the returned
        function is called (a server calls it when it stops)."""
        key = id(count)
        with self._lock:
            self._running[key] = (attributes, count)

        def unwatch() -> None:
            with self._lock:
                self._running.pop(key, None)

        return unwatch

    def _observe_running(self, options: CallbackOptions) -> Iterable[Observation]:
        with self._lock:
            sources = list(self._running.values())
        return [Observation(count(), attributes) for attributes, count in sources]

    # --- HTTP and gRPC -----------------------------------------------------------------------

    def http_request(self, method: str, status: int, seconds: float, scheme: str) -> None:
        """One HTTP request answered with ``status`` after ``seconds``, over ``scheme``
        (``http``, or ``https`` on a TLS port)."""
        bound = self._http.get((method, status, scheme))
        if bound is None:
            known = method if method in _HTTP_METHODS else OTHER
            attributes: Attributes = {
                http_attributes.HTTP_REQUEST_METHOD: known,
                http_attributes.HTTP_RESPONSE_STATUS_CODE: status,
                url_attributes.URL_SCHEME: scheme,
            }
            if status >= 500:
                attributes[error_attributes.ERROR_TYPE] = str(status)
            bound = self._records.bind(self.http_duration, (known, status, scheme), attributes)
            if len(self._http) < 1024:  # methods, statuses and schemes are few; bounded
                self._http[(method, status, scheme)] = bound
        bound.record(seconds)

    def rpc_call(self, service: str, method: str, code: int, milliseconds: float) -> None:
        """One gRPC call of a registered ``service``/``method`` ended with status ``code``."""
        self.rpc_duration.record(
            milliseconds,
            {
                rpc.RPC_SYSTEM: "grpc",
                rpc.RPC_SERVICE: service,
                rpc.RPC_METHOD: method,
                rpc.RPC_GRPC_STATUS_CODE: code,
            },
        )

    def stream_opened(self, transport: str) -> None:
        self._streams[transport] = self._streams.get(transport, 0) + 1

    def stream_closed(self, transport: str) -> None:
        self._streams[transport] -= 1

    def _observe_streams(self, options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(n, {A2A_TRANSPORT: t}) for t, n in list(self._streams.items())]

    def events_written(self, key: RunKey, attributes: Attributes, count: int) -> None:
        """``count`` events written by a run of attribute set ``key`` (``attributes``)."""
        counted = self._events.get(key)
        self._events[key] = (attributes, count if counted is None else counted[1] + count)

    def _observe_events(self, options: CallbackOptions) -> Iterable[Observation]:
        return [Observation(n, dict(attributes)) for attributes, n in list(self._events.values())]

    # --- the rest of the server --------------------------------------------------------------

    def push_delivery(self, outcome: str) -> None:
        """One push notification ``delivered``, ``refused`` or ``failed``."""
        self.push_deliveries.add(1, {OUTCOME: outcome})

    def fanout_lag(self, seconds: float, backend: str) -> None:
        """A batch of frames published ``seconds`` ago on another replica (its oldest
        frame's publication, in that replica's clock) reached its follower here."""
        attributes = self._fanout_attributes.get(backend)
        if attributes is None:
            attributes = self._fanout_attributes[backend] = {FANOUT_BACKEND: backend}
        self._records.record(self.fanout_lag_seconds, backend, attributes, max(0.0, seconds))

    @contextlib.contextmanager
    def store_call(
        self, operation: str, expected: tuple[type[BaseException], ...] = ()
    ) -> Iterator[None]:
        """Time the task-store call inside the ``with``; an exception other than
        ``expected`` ones (an answer, such as "the task already runs") is an error."""
        outcome = OUTCOME_ERROR
        started = perf_counter()
        try:
            yield
            outcome = OUTCOME_OK
        except expected:
            outcome = OUTCOME_OK
            raise
        finally:
            elapsed = perf_counter() - started
            key = (operation, outcome)
            attributes = self._store_attributes.get(key)
            if attributes is None:
                attributes = {STORE_OPERATION: operation, OUTCOME: outcome}
                self._store_attributes[key] = attributes
            self._records.record(self.store_duration, key, attributes, elapsed)

    # --- runs --------------------------------------------------------------------------------

    def run(
        self,
        agent_name: str,
        *,
        transport: str,
        protocol_version: str = "",
        encoding: str = "",
        streamed: bool = True,
        tokens: bool = True,
        started: float | None = None,
    ) -> RunMeter:
        """The meter of one served run, started now or at ``started``
        (``time.perf_counter``: when the run's upstream request left ahead of it,
        ``server/proxying/ahead.py``); ``streamed``: its caller receives the events as
        they come (its time to first token means something); ``tokens``: the run's token
        usage is recorded here (not for a remote agent, whose client call records it:
        :class:`ClientCallMeter`)."""
        key = (agent_name, transport, protocol_version, encoding)
        attributes = self._run_attributes.get(key)
        if attributes is None:
            attributes = {
                gen_ai.GEN_AI_OPERATION_NAME: OP_INVOKE_AGENT,
                gen_ai.GEN_AI_AGENT_NAME: agent_name,
                A2A_TRANSPORT: transport,
            }
            if protocol_version:
                attributes[A2A_PROTOCOL_VERSION] = protocol_version
            if encoding:
                attributes[ENCODING] = encoding
            if len(self._run_attributes) < 1024:  # bounded, as the attribute sets are
                self._run_attributes[key] = attributes
        return RunMeter(self, key, attributes, streamed=streamed, tokens=tokens, started=started)

    def tokens_used(self, attributes: Attributes, input_tokens: int, output_tokens: int) -> None:
        """``gen_ai.client.token.usage`` of one run or call: its input and output tokens
        (each when not 0), with ``attributes`` and the token type."""
        for kind, count in (("input", input_tokens), ("output", output_tokens)):
            if count:
                self.token_usage.record(count, {**attributes, gen_ai.GEN_AI_TOKEN_TYPE: kind})

    def run_ended(
        self, key: RunKey, attributes: Attributes, outcome: str, error: str, seconds: float
    ) -> None:
        """A run's duration, with its outcome (and ``error.type`` when it failed)."""
        ended_key = (key, outcome, error)
        bound = self._ended.get(ended_key)
        if bound is None:
            ended = {**attributes, OUTCOME: outcome}
            if error:
                ended[error_attributes.ERROR_TYPE] = error
            bound = self._records.bind(self.request_duration, ended_key, ended)
            if len(self._ended) < 4096:
                self._ended[ended_key] = bound
        bound.record(seconds)

    def first_tokens(
        self, key: RunKey, attributes: Attributes, to_first: float, per_token: float | None
    ) -> None:
        """A streamed run's time to its first token and, with more than one delta, its
        mean time per output token."""
        records = self._records
        records.record(self.time_to_first_token, key, attributes, to_first)
        if per_token is not None:
            records.record(self.time_per_output_token, key, attributes, per_token)

    def client_ended(self, attributes: Attributes, seconds: float) -> None:
        """A call to a remote agent took ``seconds``."""
        self.client_duration.record(seconds, attributes)

    def client_call(
        self,
        agent_name: str,
        *,
        transport: str,
        protocol_version: str,
        started: float | None = None,
    ) -> ClientCallMeter:
        """The meter of one call to a remote agent, started now or at ``started`` (as
        :meth:`run`'s)."""
        attributes: Attributes = {
            gen_ai.GEN_AI_OPERATION_NAME: OP_INVOKE_AGENT,
            gen_ai.GEN_AI_AGENT_NAME: agent_name,
        }
        if transport:
            attributes[A2A_TRANSPORT] = transport
        if protocol_version:
            attributes[A2A_PROTOCOL_VERSION] = protocol_version
        return ClientCallMeter(self, attributes, started)


#: Meter provider class → whether it records (neither the API's proxy nor its no-op).
_RECORDS: dict[type, bool] = {}
_BY_PROVIDER: dict[int, tuple[MeterProvider, BridgeMetrics]] = {}
_BY_PROVIDER_LOCK = threading.Lock()


def metrics_for(provider: MeterProvider | None = None) -> BridgeMetrics | None:
    """The instruments on ``provider`` (default: the global one); ``None`` when it records
    nothing (no SDK provider installed: metrics are off)."""
    current = provider if provider is not None else metrics.get_meter_provider()
    kind = type(current)
    records = _RECORDS.get(kind)
    if records is None:
        off = (metrics.NoOpMeterProvider, _ProxyMeterProvider)
        records = _RECORDS[kind] = not issubclass(kind, off)
    if not records:
        return None
    found = _BY_PROVIDER.get(id(current))
    if found is not None and found[0] is current:
        return found[1]
    with _BY_PROVIDER_LOCK:
        found = _BY_PROVIDER.get(id(current))
        if found is None or found[0] is not current:
            found = (current, BridgeMetrics(current))
            _BY_PROVIDER[id(current)] = found
    return found[1]


def store_timer(
    metrics: BridgeMetrics | None,
    operation: str,
    expected: tuple[type[BaseException], ...] = (),
) -> contextlib.AbstractContextManager[None]:
    """:meth:`BridgeMetrics.store_call`, or nothing when metrics are off."""
    if metrics is None:
        return contextlib.nullcontext()
    return metrics.store_call(operation, expected)
