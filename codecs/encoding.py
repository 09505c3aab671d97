"""The encoding seam: which wire encoding a caller gets, chosen per request.

An *encoding* turns one run's :class:`~trpc_bridge.events.AgentEvent` stream into A2A
frames: a :class:`StreamEncoding` for ``message/stream`` (``start`` → ``encode`` per event
→ ``close``) and a :class:`UnaryEncoding` for ``message/send`` (``add`` per event, then
``result``). Each encoding is one module exposing an :class:`Encoding` object, listed once
in :data:`_BUILT_IN` (or added at run time with :func:`register_encoding`).

A door never chooses by if/else: it describes what the caller sent as an
:class:`EncodingRequest` and asks :func:`select_encoding` with the server's negotiation
policy (``docs/specs/trpc-interaction.md`` §3.1): ``auto`` takes the first registered encoding that
accepts the request, in registration order (plain A2A last, accepting everyone);
``always`` / ``never`` are trpc's names for ``trpc`` / ``plain``; any encoding's name
forces it.

An *overlay* adds frames beside whichever encoding was chosen (tfrs progress): every
registered :class:`Overlay` that accepts the request wraps the stream encoder
(:func:`stream_encoding`). Overlays do not touch unary runs.
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from a2a.types import Message, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent

from trpc_bridge.codecs.a2a.text_delta import TextDelta
from trpc_bridge.events import AgentEvent, ObjectType

#: What a stream encoder produces; the server's task aggregate and subscribers take these.
#: A :class:`TextDelta` only when the run asked for them (``RunTarget.text_deltas``).
StreamFrame = TaskStatusUpdateEvent | TaskArtifactUpdateEvent | Message | TextDelta
#: A stream frame as a2a-sdk's transports take it.
ProtoFrame = TaskStatusUpdateEvent | TaskArtifactUpdateEvent | Message


def as_proto(frame: StreamFrame) -> ProtoFrame:
    return frame.to_proto() if isinstance(frame, TextDelta) else frame


class WireVersion(enum.StrEnum):
    """The A2A protocol version of the caller's wire (not the trpc spec version)."""

    V0_3 = "0.3"
    V1_0 = "1.0"


@dataclass(frozen=True)
class EncodeOptions:
    """Server-side encoding switches (trpc-agent-go's server options)."""

    #: Write every part-level key twice, ``k`` and ``adk_k`` (trpc's default).
    adk_compat: bool = True
    #: ``graph.*`` object types that may cross: exact, ``prefix*``, ``*suffix`` or ``*``.
    graph_allowlist: tuple[str, ...] = (ObjectType.GRAPH_EXECUTION,)
    #: Terminal errors as a failed/canceled status with error metadata (the bridge
    #: default); ``False`` is trpc's default: a generic text message, no terminal status.
    structured_errors: bool = True


@dataclass(frozen=True)
class EncodingRequest:
    """What the caller sent that decides its encoding."""

    #: ``interaction_spec_version`` from the request metadata (trpc's negotiation key).
    spec_version: str | None = None
    #: The request message's metadata, as JSON.
    metadata: Mapping[str, Any] = field(default_factory=dict)
    #: A2A extension URIs the caller asked for (``A2A-Extensions`` / ``X-A2A-Extensions``).
    extensions: frozenset[str] = frozenset()
    #: The caller's request headers (or gRPC metadata), names in lower case.
    headers: Mapping[str, str] = field(default_factory=dict)
    #: The metadata of the request message's parts, as JSON (ADK marks its user's parts).
    part_metadata: tuple[Mapping[str, Any], ...] = ()
    wire: WireVersion = WireVersion.V0_3


@dataclass(frozen=True)
class RunTarget:
    """The run an encoder writes for."""

    task_id: str
    context_id: str
    options: EncodeOptions = field(default_factory=EncodeOptions)
    wire: WireVersion = WireVersion.V0_3
    #: The consumer takes :class:`TextDelta` frames (a door that writes 0.3 JSON itself);
    #: otherwise every frame is protobuf.
    text_deltas: bool = False


class StreamEncoding(Protocol):
    """One streaming run. ``done`` turns true once the run's last frame is produced."""

    done: bool

    def start(self, *, app_name: str, user_id: str) -> list[StreamFrame]: ...

    def encode(self, event: AgentEvent) -> list[StreamFrame]: ...

    def close(self) -> list[StreamFrame]: ...


class UnaryEncoding(Protocol):
    """One ``message/send`` run: :meth:`add` until it returns ``False``, then
    :meth:`result`.

    An encoding whose unary answer is the task itself (plain A2A) sets :attr:`streamed`:
    the server then drives that stream encoder instead of :meth:`add`, so the live task
    is up to date during the run (``tasks/get``, subscribers, ``return_immediately``), and
    :meth:`result` returns ``None`` for "the task as its frames built it". trpc's packing
    (one message → ``Message``, several → ``Task``) needs all events first: ``None``.
    """

    @property
    def streamed(self) -> StreamEncoding | None: ...

    def add(self, event: AgentEvent) -> bool: ...

    def result(self, *, context_id: str, task_id: str) -> Message | Task | None: ...


class Encoding(Protocol):
    """A registered wire encoding."""

    @property
    def name(self) -> str: ...

    def accepts(self, request: EncodingRequest) -> bool:
        """Under ``auto``: does this caller want this encoding?"""
        ...

    def stream(self, run: RunTarget) -> StreamEncoding: ...

    def unary(self, run: RunTarget) -> UnaryEncoding: ...


class Overlay(Protocol):
    """A registered addition beside the chosen encoding, asked for per request."""

    @property
    def name(self) -> str: ...

    def accepts(self, request: EncodingRequest) -> bool: ...

    def wrap(self, encoder: StreamEncoding, run: RunTarget) -> StreamEncoding: ...


class Negotiation(enum.StrEnum):
    """The policies every server understands (``--negotiation``); an encoding's name
    (``trpc``, ``plain``, …) is a policy too: that encoding for every caller."""

    #: Per request, from what the caller sends.
    AUTO = "auto"
    #: trpc-agent-go's own behaviour: the trpc encoding for everyone.
    ALWAYS = "always"
    #: Plain A2A for everyone: the answer text only.
    NEVER = "never"


_ALIASES: dict[str, str] = {Negotiation.ALWAYS: "trpc", Negotiation.NEVER: "plain"}

#: Built-in encodings, ``module:attribute``, in ``auto`` order; imported on first use
#: (the encoding modules import this one).
_BUILT_IN = (
    "trpc_bridge.codecs.dialects.encodings:ADK",
    "trpc_bridge.codecs.dialects.encodings:TRPC_PYTHON",
    "trpc_bridge.codecs.trpc.runs:TRPC",
    "trpc_bridge.codecs.dialects.plain:PLAIN",
)
_registry: dict[str, Encoding] = {}
#: Built-in overlays, applied in this order (the first wraps the encoder innermost).
_BUILT_IN_OVERLAYS = ("trpc_bridge.codecs.tfrs.overlay:TFRS_PROGRESS",)
_overlays: dict[str, Overlay] = {}


def _load(spec: str) -> Any:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def _filled(registry: dict[str, Any], specs: tuple[str, ...]) -> dict[str, Any]:
    """``registry``, loaded from ``specs`` (each object's ``name`` is its key) if empty."""
    if not registry:
        for spec in specs:
            item = _load(spec)
            registry[item.name] = item
    return registry


def _encodings() -> dict[str, Encoding]:
    return _filled(_registry, _BUILT_IN)


def register_encoding(encoding: Encoding, *, before: str | None = None) -> None:
    """Add (or replace) an encoding; under ``auto`` it is tried before ``before`` (default:
    before ``plain``, the catch-all)."""
    current = dict(_encodings())
    current.pop(encoding.name, None)
    anchor = before if before is not None else "plain"
    _registry.clear()
    for name, known in current.items():
        if name == anchor:
            _registry[encoding.name] = encoding
        _registry[name] = known
    _registry.setdefault(encoding.name, encoding)


def encoding_names() -> list[str]:
    return list(_encodings())


def parse_negotiation(value: str) -> str:
    """A ``--negotiation`` value, checked: ``auto``, ``always``, ``never`` or an encoding's
    name. Raises ``ValueError`` naming the choices."""
    choice = value.strip().lower()
    if choice in set(Negotiation) or choice in _encodings():
        return choice
    names = ", ".join([*Negotiation, *_encodings()])
    raise ValueError(f"unknown negotiation {value!r}; choose one of {names}")


def select_encoding(policy: str, request: EncodingRequest) -> Encoding:
    """The encoding for one request under ``policy`` (see the module doc)."""
    encodings = _encodings()
    if policy != Negotiation.AUTO:
        return encodings[_ALIASES.get(policy, policy)]
    for encoding in encodings.values():
        if encoding.accepts(request):
            return encoding
    return encodings["plain"]


def _overlay_registry() -> dict[str, Overlay]:
    return _filled(_overlays, _BUILT_IN_OVERLAYS)


def register_overlay(overlay: Overlay) -> None:
    """Add (or replace) an overlay; it wraps outside the ones already registered."""
    registry = _overlay_registry()
    registry.pop(overlay.name, None)
    registry[overlay.name] = overlay


def stream_encoding(policy: str, request: EncodingRequest, run: RunTarget) -> StreamEncoding:
    """The stream encoder for one request: the selected encoding's, wrapped by every
    overlay that accepts the request."""
    encoder = select_encoding(policy, request).stream(run)
    for overlay in _overlay_registry().values():
        if overlay.accepts(request):
            encoder = overlay.wrap(encoder, run)
    return encoder


def fill_required_parts(item: ProtoFrame | Task) -> None:
    """A2A 1.0 marks ``Message.parts`` and ``Artifact.parts`` REQUIRED (at least one), so a
    metadata-only message or artifact gets one empty text part on the 1.0 wire: it adds no
    content, and 1.0 validators accept it (``docs/specs/trpc-interaction.md`` §2.12)."""
    holders: list[Any] = []
    if isinstance(item, Message):
        holders.append(item)
    elif isinstance(item, TaskArtifactUpdateEvent):
        holders.append(item.artifact)
    else:
        if item.status.HasField("message"):
            holders.append(item.status.message)
        if isinstance(item, Task):
            holders.extend(item.history)
            holders.extend(item.artifacts)
    for holder in holders:
        if not holder.parts:
            holder.parts.add(text="")
