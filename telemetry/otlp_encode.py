"""Finished spans to OTLP protobuf bytes (``ExportTraceServiceRequest``), written directly.

The SDK's encoder builds a protobuf object per span, per attribute and per value, and
hashes each span's resource (a JSON dump of its attributes) to group the batch: about
80 µs a span, more than opening and ending the span costs. On a bridge serving unary
calls that is most of what tracing costs. This module writes the same message as the
SDK's ``encode_spans(spans).SerializePartialToString()`` — the same fields, the same
grouping by resource and instrumentation scope, in the same order, so the same bytes
(``tests/telemetry/test_otlp_encode.py`` checks that on random spans) — in a fraction of
the time: resources and scopes are looked up by identity before they are compared (one
object per tracer provider and per tracer) and encoded once per batch.

Field numbers are those of ``opentelemetry/proto/trace/v1/trace.proto``; fields are
written in field-number order, as protobuf serialisers do, and proto3 defaults (empty,
zero) are left out except where the SDK sets a sub-message (a span's ``status`` is always
there, even when unset).
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext
from opentelemetry.trace.span import DEFAULT_TRACE_STATE

logger = logging.getLogger(__name__)

_fixed64 = struct.Struct("<Q").pack
_fixed32 = struct.Struct("<I").pack
_double = struct.Struct("<d").pack
#: A span's ``start_time_unix_nano`` and ``end_time_unix_nano`` fields (tag, fixed64, twice).
_TIMES = struct.Struct("<BQBQ").pack

#: ``Span.flags`` bits: the context says whether the parent is remote, and it is.
_HAS_IS_REMOTE = 0x100
_IS_REMOTE = 0x200

#: The OTLP ``SpanKind`` of the SDK's ``SpanKind`` value (OTLP reserves 0 for unspecified).
_KIND = {0: b"\x30\x01", 1: b"\x30\x02", 2: b"\x30\x03", 3: b"\x30\x04", 4: b"\x30\x05"}


def _varint(value: int) -> bytes:
    if value < 0:  # int64: two's complement, always ten bytes
        value += 1 << 64
    if value < 0x80:
        return _BYTE[value]
    if value < 0x4000:  # two bytes: a span's length, most batches' resource lengths
        return bytes(((value & 0x7F) | 0x80, value >> 7))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


#: One-byte varints, looked up rather than built: most lengths in a span are below 128.
_BYTE = [bytes((n,)) for n in range(0x80)]


def _field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: its tag byte(s), the payload's length, the payload."""
    size = len(payload)
    return tag + (_BYTE[size] if size < 0x80 else _varint(size)) + payload


def _text(tag: bytes, value: str) -> bytes:
    return _field(tag, value.encode()) if value else b""


def _any_value(value: Any) -> bytes:
    """An ``AnyValue``'s payload, with the SDK's order of type checks (bool before int).

    Its fields are one ``oneof``: a member that is set is written even when it holds its
    type's default (``False``, ``0``, ``""``)."""
    if value is None:
        return b""
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, str):
        return _field(b"\x0a", value.encode())
    if isinstance(value, int):
        return b"\x18" + _varint(value)
    if isinstance(value, float):
        return b"\x21" + _double(value)
    if isinstance(value, bytes):
        return _field(b"\x3a", value)
    if isinstance(value, Sequence):
        return _field(b"\x2a", b"".join(_field(b"\x0a", _any_value(v)) for v in value))
    if isinstance(value, Mapping):
        pairs = b"".join(_field(b"\x0a", _key_value(str(k), v)) for k, v in value.items())
        return _field(b"\x32", pairs)
    raise TypeError(f"attribute value of type {type(value).__name__} cannot be encoded")


def _key_value(key: str, value: Any) -> bytes:
    return _text(b"\x0a", key) + _field(b"\x12", _any_value(value))


#: Each attribute key's encoded ``KeyValue.key`` field: keys are a program's constants,
#: so a span's keys are almost always known; bounded in case a program makes them up.
_KEYS: dict[str, bytes] = {}
_KEYS_MAX = 4096
#: Each span name and kind's encoded ``Span.name`` and ``Span.kind`` fields, bounded the
#: same way.
_NAMES: dict[tuple[str, Any], bytes] = {}


#: Encoded ``KeyValue`` fields of short string attributes, by (tag, key, value): an
#: agent's name, the transport, the operation repeat on every span. Values this long or
#: longer are encoded each time: ids (a UUID has 36 characters) and messages, which never
#: repeat, would only fill the cache. Emptied when full, so short values that never
#: repeat cannot crowd the others out for long.
_PAIRS: dict[tuple[bytes, str, str], bytes] = {}
_PAIRS_MAX = 1024
_PAIRS_LONGEST = 32


def _attributes(tag: bytes, attributes: Mapping[str, Any] | None) -> bytes:
    """Repeated ``KeyValue`` fields; a string value (most are) takes the inline path."""
    if not attributes:
        return b""
    out = []
    for key, value in _items(attributes):
        if type(value) is str:
            if len(value) >= _PAIRS_LONGEST:
                out.append(_string_pair(tag, key, value))
                continue
            known = _PAIRS.get((tag, key, value))
            if known is None:
                known = _string_pair(tag, key, value)
                if len(_PAIRS) >= _PAIRS_MAX:
                    _PAIRS.clear()
                _PAIRS[tag, key, value] = known
            out.append(known)
            continue
        try:
            pair = _key(key) + _field(b"\x12", _any_value(value))
        except TypeError as error:  # the SDK's rule: the attribute is left out, logged
            logger.error("attribute %s left out of the exported span: %s", key, error)
            continue
        out.append(_field(tag, pair))
    return b"".join(out)


def _string_pair(tag: bytes, key: str, value: str) -> bytes:
    """A ``KeyValue`` field (``tag``) of a string attribute: the key, then the value as an
    ``AnyValue`` holding a string."""
    keyed = _key(key)
    encoded = value.encode()
    size = len(encoded)
    if len(keyed) + size < 0x7C:  # an id's pair: every length below fits one byte
        value_field = b"\x12" + _BYTE[size + 2] + b"\x0a" + _BYTE[size] + encoded
        return tag + _BYTE[len(keyed) + size + 4] + keyed + value_field
    return _field(tag, keyed + _field(b"\x12", _field(b"\x0a", encoded)))


def _key(key: str) -> bytes:
    """The ``KeyValue.key`` field of ``key`` (cached: keys are a program's constants)."""
    encoded = _KEYS.get(key)
    if encoded is None:
        encoded = _text(b"\x0a", key)
        if len(_KEYS) < _KEYS_MAX:
            _KEYS[key] = encoded
    return encoded


def _items(attributes: Mapping[str, Any]) -> Iterable[tuple[str, Any]]:
    """``attributes.items()``. A finished SDK span hands out its attributes as a read-only
    view of a ``BoundedAttributes``, which yields each pair through two Python-level
    calls; the plain dict inside it, when there is one, gives the same pairs in the same
    order at C speed."""
    if type(attributes) is dict:  # a lean SERVER span's (telemetry/lean_span.py)
        return attributes.items()
    inner = getattr(attributes, "_dict", None)
    if type(inner) is dict:
        return inner.items()
    return attributes.items()


def _count(tag: bytes, value: int) -> bytes:
    return tag + _varint(value) if value else b""


def _flags(tag: bytes, parent: SpanContext | None) -> bytes:
    flags = _HAS_IS_REMOTE | (_IS_REMOTE if parent is not None and parent.is_remote else 0)
    return tag + _fixed32(flags)


#: A span's ``flags`` field, local parent (or none) and remote parent.
_SPAN_FLAGS_LOCAL = _flags(b"\x85\x01", None)
_SPAN_FLAGS_REMOTE = b"\x85\x01" + _fixed32(_HAS_IS_REMOTE | _IS_REMOTE)


#: ``ReadableSpan`` properties that return one of its fields as it is.
_FIELDS = {
    "name": "_name",
    "kind": "_kind",
    "parent": "_parent",
    "start_time": "_start_time",
    "end_time": "_end_time",
    "status": "_status",
    "resource": "_resource",
    "instrumentation_scope": "_instrumentation_scope",
}
#: Span class → whether its properties are ``ReadableSpan``'s own (then its fields are
#: read directly, which is what those properties would return: one property call less
#: per field of every exported span).
_PLAIN: dict[type, bool] = {}


def _plain(kind: type) -> bool:
    plain = _PLAIN.get(kind)
    if plain is None:
        plain = _PLAIN[kind] = issubclass(kind, ReadableSpan) and all(
            getattr(kind, name) is getattr(ReadableSpan, name) for name in _FIELDS
        )
    return plain


def _span(span: ReadableSpan) -> bytes:
    context = span.get_span_context()
    assert context is not None  # an SDK span always has one
    if _plain(type(span)):
        parent, name_, kind = span._parent, span._name, span._kind
        start, end, status = span._start_time, span._end_time, span._status
    else:
        parent, name_, kind = span.parent, span.name, span.kind
        start, end, status = span.start_time, span.end_time, span.status
    # A span context is a tuple (trace id, span id, is remote, flags, state, is valid):
    # unpacked, not read through a property per field.
    trace_id, span_id, _, _, trace_state, _ = context
    out = [b"\x0a\x10" + trace_id.to_bytes(16, "big") + b"\x12\x08" + span_id.to_bytes(8, "big")]
    # The API's shared empty state (most spans' state) is known empty without asking it.
    if trace_state is not DEFAULT_TRACE_STATE and trace_state:
        state = ",".join(f"{key}={value}" for key, value in trace_state.items())
        out.append(_text(b"\x1a", state))
    remote = False
    if parent is not None:
        _, parent_id, remote, _, _, _ = parent
        out.append(b"\x22\x08" + parent_id.to_bytes(8, "big"))
    named = _NAMES.get((name_, kind))
    if named is None:  # the name and kind fields
        named = _text(b"\x2a", name_) + _KIND[kind._value_]
        if len(_NAMES) < _KEYS_MAX:  # span names are low-cardinality by OTel's rules
            _NAMES[name_, kind] = named
    out.append(named)
    if start and end:
        out.append(_TIMES(0x39, start, 0x41, end))
    elif start:
        out.append(b"\x39" + _fixed64(start))
    elif end:
        out.append(b"\x41" + _fixed64(end))
    # The span's own attributes object, not the read-only view ``span.attributes`` wraps
    # around it (see :func:`_items`).
    attributes = getattr(span, "_attributes", None)
    if type(attributes) is not dict and not isinstance(attributes, Mapping):
        attributes = span.attributes
    out.append(_attributes(b"\x4a", attributes))
    if dropped := span.dropped_attributes:
        out.append(b"\x50" + _varint(dropped))
    # The span's own lists, not the tuples ``span.events`` / ``span.links`` copy them to.
    events = getattr(span, "_events", None)
    for event in span.events if events is None else events:
        payload = b"".join(
            (
                b"\x09" + _fixed64(event.timestamp) if event.timestamp else b"",
                _text(b"\x12", event.name),
                _attributes(b"\x1a", event.attributes),
                _count(b"\x20", event.dropped_attributes),
            )
        )
        out.append(_field(b"\x5a", payload))
    if dropped := span.dropped_events:
        out.append(b"\x60" + _varint(dropped))
    links = getattr(span, "_links", None)
    for link in span.links if links is None else links:
        payload = b"".join(
            (
                b"\x0a\x10" + link.context.trace_id.to_bytes(16, "big"),
                b"\x12\x08" + link.context.span_id.to_bytes(8, "big"),
                _attributes(b"\x22", link.attributes),
                _count(b"\x28", link.dropped_attributes),
                _flags(b"\x35", link.context),
            )
        )
        out.append(_field(b"\x6a", payload))
    if dropped := span.dropped_links:
        out.append(b"\x70" + _varint(dropped))
    flags = _SPAN_FLAGS_REMOTE if remote else _SPAN_FLAGS_LOCAL
    if status.is_unset and not status.description:
        out.append(b"\x7a\x00" + flags)  # the empty Status the SDK always sets
    else:
        code = status.status_code.value
        description = _text(b"\x12", status.description or "")
        out.append(_field(b"\x7a", description + (b"\x18" + _varint(code) if code else b"")))
        out.append(flags)
    return b"".join(out)


def _scope(scope: InstrumentationScope | None) -> bytes:
    if scope is None:
        return b""
    return (
        _text(b"\x0a", scope.name)
        + _text(b"\x12", scope.version or "")
        + _attributes(b"\x1a", scope.attributes)
    )


@dataclass
class _ScopeSpans:
    scope: InstrumentationScope | None
    spans: list[bytes] = field(default_factory=list)


@dataclass
class _ResourceSpans:
    resource: Resource
    scopes: list[_ScopeSpans] = field(default_factory=list)

    def scope(self, scope: InstrumentationScope | None) -> _ScopeSpans:
        found = next((s for s in self.scopes if s.scope == scope), None)
        if found is None:
            found = _ScopeSpans(scope)
            self.scopes.append(found)
        return found


def encode_spans(spans: Sequence[ReadableSpan]) -> bytes:
    """The serialised ``ExportTraceServiceRequest`` of ``spans``.

    Grouped as the SDK groups them, by resource and then scope *value*, in order of first
    appearance; looked up by identity first (one resource per provider, one scope per
    tracer), so values are compared once per distinct object, not per span.
    """
    resources: list[_ResourceSpans] = []
    by_id: dict[tuple[int, int], _ScopeSpans] = {}
    for span in spans:
        if _plain(type(span)):
            resource, scope = span._resource, span._instrumentation_scope or None
        else:
            resource, scope = span.resource, span.instrumentation_scope or None
        group = by_id.get((id(resource), id(scope)))
        if group is None:
            owner = next((r for r in resources if r.resource == resource), None)
            if owner is None:
                owner = _ResourceSpans(resource)
                resources.append(owner)
            group = by_id[id(resource), id(scope)] = owner.scope(scope)
        group.spans.append(_field(b"\x12", _span(span)))
    return b"".join(_field(b"\x0a", _resource_spans(r)) for r in resources)


def _resource_spans(group: _ResourceSpans) -> bytes:
    out = [_field(b"\x0a", _attributes(b"\x0a", group.resource.attributes))]
    for scoped in group.scopes:
        scope = scoped.scope
        payload = (
            _field(b"\x0a", _scope(scope))
            + b"".join(scoped.spans)
            + _text(b"\x1a", (scope.schema_url if scope is not None else "") or "")
        )
        out.append(_field(b"\x12", payload))
    out.append(_text(b"\x1a", group.resource.schema_url))
    return b"".join(out)
