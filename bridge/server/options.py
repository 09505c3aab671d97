"""How a server is configured: :class:`ServerOptions`, made of small value types, one per
concern (after httpx's ``Timeout`` and ``Limits``).

Each default is written here once. The modules that enforce a setting read their defaults
from these types (``Limits.header_timeout``, ``Durability.keep_tasks``, …), and so do the
serving commands' flags (``cli/server_flags.py``), so a default changes in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from opentelemetry.trace import TracerProvider

from trpc_bridge.codecs.encoding import EncodeOptions, Negotiation
from trpc_bridge.redaction import Redaction
from trpc_bridge.server.auth.options import SecurityOptions

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from prometheus_client import CollectorRegistry

    from trpc_bridge.telemetry.span_buffer import SpanBuffer


@dataclass(frozen=True)
class Limits:
    """What one caller can make the server hold, on every door (HTTP and gRPC)."""

    #: Largest request body (HTTP 413; gRPC's largest message).
    max_request_bytes: int = 10 * 1024 * 1024
    #: Concurrent HTTP connections past which requests get 503 (and gRPC calls
    #: RESOURCE_EXHAUSTED past as many concurrent calls).
    max_connections: int = 1000
    #: Seconds for a request head to arrive (HTTP 408 and closed after; gRPC's handshake).
    header_timeout: float = 10.0
    #: Bytes and header lines of a request head (HTTP 431 and closed past either); gRPC:
    #: the size and the number of entries of a call's metadata.
    max_header_bytes: int = 64 * 1024
    max_header_lines: int = 100
    #: Seconds for a whole request body to arrive (HTTP 408).
    body_timeout: float = 30.0
    #: Seconds an idle HTTP keep-alive connection stays open.
    keep_alive: int = 5
    #: Seconds an agent run may take on any door before it is cancelled and fails with a
    #: ``run_error``; 0 = no limit.
    run_timeout: float = 0.0


@dataclass(frozen=True)
class Durability:
    """Where tasks are kept, and how running ones survive a crash or a shutdown."""

    #: Empty: in memory. ``sqlite:////abs/path.db``, ``postgresql://…``: a2a-sdk's
    #: ``DatabaseTaskStore`` (``tasks/store.py``).
    task_store: str = ""
    #: In memory only: finished tasks kept for ``tasks/get`` (the oldest are dropped).
    keep_tasks: int = 10_000
    #: In memory only: the most the kept tasks may take, in MiB of their serialized
    #: bytes (the oldest are dropped; the newest is kept whatever its size).
    keep_task_mb: int = 256
    #: Database store: seconds between checkpoints of a running task.
    journal_interval: float = 0.2
    #: Database store: a replica without a heartbeat for this long is dead (its tasks fail).
    replica_timeout: float = 30.0
    #: Live tasks shared between replicas: ``auto`` (PostgreSQL store: through it),
    #: ``postgresql``, ``redis://host:port/db``, or ``none`` (one replica).
    fanout: str = "auto"
    #: Seconds running tasks get to finish after SIGTERM / Ctrl-C before they are ended.
    shutdown_grace: float = 10.0


@dataclass(frozen=True)
class EncodingOptions:
    """Which wire encoding each caller gets, and how its frames are written."""

    #: ``auto``, ``always``, ``never`` or an encoding's name (``--negotiation``).
    negotiation: str = Negotiation.AUTO
    #: trpc's encoding options (ADK keys, graph events, structured errors).
    encode: EncodeOptions = field(default_factory=EncodeOptions)
    #: Frames a subscriber may hold before its text deltas start to be merged:
    #: trpc-agent-go's own subscriber buffer size (docs/specs/trpc-interaction.md §7.12). A consumer
    #: within that lag sees exactly trpc's frames; past it trpc aborts the stream ("event
    #: queue is full"), the bridge merges.
    coalesce_after: int = 1024


@dataclass(frozen=True)
class PushPolicy:
    """Where webhooks may go (``push/policy.py`` screens every URL with it)."""

    #: Host patterns a webhook may use; empty = any public host.
    allow_hosts: tuple[str, ...] = ()
    #: Webhooks on loopback (127.0.0.0/8, ::1, localhost) are allowed.
    allow_loopback: bool = False


@dataclass(frozen=True)
class PushOptions:
    """Push notifications: declared on the card when enabled; where webhooks may go."""

    enabled: bool = True
    policy: PushPolicy = field(default_factory=PushPolicy)
    #: PEM private key file that signs push-notification JWTs, re-read when it changes
    #: (replicas share it); empty = keys generated in memory (``push/signing.py``).
    signing_key: str = ""
    #: Generated signing keys: seconds between rotations (0 = never).
    key_rotation: float = 86_400.0


@dataclass(frozen=True)
class OpsOptions:
    """What a server exposes to its operator: metrics, probes, access lines, the trace view."""

    #: Where the server's metrics go; ``None``: the global provider (``setup_metrics``),
    #: which records nothing unless metrics were set up.
    meter_provider: MeterProvider | None = None
    #: The Prometheus text to serve (``setup_metrics(prometheus=True).registry``);
    #: ``None``: nothing is scraped.
    prometheus: CollectorRegistry | None = None
    #: Also serve ``GET /metrics`` on the HTTP port (``--metrics-path``), behind the
    #: server's authentication like every other route ...
    metrics_path: bool = False
    #: ... unless this says it is public (``--metrics-public``: a scraper without
    #: credentials).
    metrics_public: bool = False
    #: A port of its own for ``/metrics``, ``/healthz`` and ``/readyz`` (``--metrics-port``);
    #: 0 = a free port; ``None`` = none.
    metrics_port: int | None = None
    #: One log line per request on the ``trpc_bridge.access`` logger.
    access_log: bool = False
    #: The playground's trace view: the spans it reads (and OTLP/HTTP span exports
    #: accepted at ``/v1/traces`` from loopback peers and authenticated callers);
    #: ``None``: off.
    span_buffer: SpanBuffer | None = None
    #: The server adds ``span_buffer`` to the global tracer provider (installing one if
    #: tracing is off) when it starts: the trace view of ``trpc-bridge serve``. Off, the
    #: buffer is fed by whoever added it to a provider (a library user, a test).
    global_span_buffer: bool = False
    #: Seconds between SIGTERM failing readiness and the server no longer accepting work
    #: (``--unready-delay``): time for a load balancer to stop sending new requests.
    unready_delay: float = 0.0
    #: Seconds a readiness check waits for the task store or the fan-out to answer.
    probe_timeout: float = 2.0


@dataclass(frozen=True)
class ServerOptions:
    """Everything a :class:`~trpc_bridge.server.BridgeServer` is told."""

    host: str = "127.0.0.1"
    #: HTTP port; 0 = a free port.
    port: int = 0
    #: gRPC (A2A 0.3 and 1.0) port; 0 = a free port; None = no gRPC server.
    grpc_port: int | None = 0
    #: Path prefix of every route (e.g. ``/agents/weather``); empty = root.
    base_path: str = ""
    #: The URL written into the card when not serving (``starlette_app`` alone).
    public_url: str = ""
    #: Where the server's spans go; None = the global provider (``setup_tracing``).
    tracer_provider: TracerProvider | None = None
    #: The chat page at ``GET <base_path>/`` (``doors/playground.py``); JSON-RPC keeps POST.
    playground: bool = True
    #: ``agent-card.json`` is the 1.0 card alone for requests without ``A2A-Version`` (for
    #: strict A2A 1.0 schema validators); off, the card every client reads: the 1.0 card
    #: merged with the 0.3 fields, as a2a-sdk serves it (``a2a/card_routes.py``).
    strict_card: bool = False
    #: PEM private key file that signs the agent card (``a2a/card_signing.py``), re-read
    #: when it changes; empty = the card is not signed.
    card_signing_key: str = ""
    #: What is masked in what the bridge writes for its callers (tfrs progress, E2A
    #: records and wire log, spans, logs): installed for the process at start.
    redaction: Redaction = field(default_factory=Redaction)
    limits: Limits = field(default_factory=Limits)
    durability: Durability = field(default_factory=Durability)
    encoding: EncodingOptions = field(default_factory=EncodingOptions)
    push: PushOptions = field(default_factory=PushOptions)
    #: Authentication and TLS (``server/auth``); by default ``X-User-ID`` on trust, which
    #: only a loopback ``host`` allows.
    security: SecurityOptions = field(default_factory=SecurityOptions)
    #: Metrics, probes, access lines, the trace view (``server/ops``).
    ops: OpsOptions = field(default_factory=OpsOptions)
