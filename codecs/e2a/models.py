"""E2A request and response records (docs/specs/e2a.md §4, §5, §12): typed, with ``from_dict`` /
``to_dict``.

``from_dict`` reads what docs/specs/e2a.md §9 keeps readable — ``channel_id`` → ``channel``,
``req_method`` → ``method``, top-level ``metadata`` → ``channel_context`` (only when that is
empty), ``binding`` → ``provenance.details.migrated_from_binding``, a top-level ``payload``
merged into ``params`` without overwriting — and epoch-second timestamps (normalised to
RFC 3339 UTC). ``to_dict`` writes only the current keys; it leaves out what is empty
(``None``, ``{}``, ``[]``) except the fields every record carries, so a record read and
written again is the same JSON.

Every bad input raises a typed :class:`~trpc_bridge.codecs.e2a.errors.E2AError`: an
unknown major ``protocol_version`` (:class:`E2AVersionError`), a missing id or a field of
the wrong type (:class:`E2AFormatError`), ``status: failed`` with another kind than
``e2a.error`` (:class:`E2ARuleError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    StrictBool,
    StrictInt,
    ValidationError,
    field_serializer,
)

from trpc_bridge.codecs.e2a.bodies import check_record
from trpc_bridge.codecs.e2a.constants import (
    E2A_PROTOCOL_VERSION,
    SOURCE_A2A,
    SOURCE_ACP,
    SOURCE_E2A,
    STATUS_IN_PROGRESS,
)
from trpc_bridge.codecs.e2a.errors import E2AFormatError, E2AVersionError, format_error


def utc_now() -> str:
    """Now as RFC 3339 UTC, the form E2A writes (``2026-03-29T12:00:00.123456+00:00``)."""
    return datetime.now(UTC).isoformat()


def _timestamp(value: Any) -> Any:
    """RFC 3339 text is kept as written (once checked); epoch seconds become RFC 3339 UTC."""
    if isinstance(value, bool):  # bool is an int in Python; never a time
        raise ValueError("a timestamp is RFC 3339 text or epoch seconds, not a boolean")
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(float(value), tz=UTC).isoformat()
        except (OverflowError, OSError, ValueError) as exc:
            raise ValueError(f"epoch seconds out of range: {value!r}") from exc
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError as exc:
            raise ValueError("not an RFC 3339 timestamp") from exc
        if parsed.tzinfo is None:
            raise ValueError("an RFC 3339 timestamp needs a UTC offset")
    return value


Timestamp = Annotated[str, BeforeValidator(_timestamp)]
IdentityOrigin = Literal["system", "user", "agent", "service"]
SourceProtocol = Literal["e2a", "acp", "a2a"]
ResponseStatus = Literal["succeeded", "failed", "in_progress"]
NonEmpty = Annotated[str, Field(min_length=1)]

# Unknown keys are ignored (a newer 1.x writer may add some); the known ones are typed.
_CONFIG = ConfigDict(extra="ignore", populate_by_name=True, frozen=False)


class E2AProvenance(BaseModel):
    """Where a record came from: native E2A, or converted from ACP / A2A, by whom, when."""

    model_config = _CONFIG
    source_protocol: SourceProtocol = SOURCE_E2A
    converter: str | None = None
    converted_at: Timestamp | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class E2AFileRef(BaseModel):
    """An attachment in ``params.files`` / ``params.attachments``."""

    model_config = _CONFIG
    uri: NonEmpty
    name: str | None = None
    mime_type: str | None = None
    size: StrictInt | None = None
    meta: dict[str, Any] = Field(default_factory=dict, alias="_meta")


class E2AAuth(BaseModel):
    """Credentials or references to them. ``bearer_token`` is a :class:`SecretStr`: its
    ``repr`` is masked, so logging the model never shows it; ``to_dict`` (the wire form)
    carries it, and the wire log masks it again (``redact.log_line``)."""

    model_config = _CONFIG
    method_id: str | None = None
    bearer_token: SecretStr | None = None
    api_key_ref: str | None = None
    credential_ref: str | None = None
    #: Out of ``repr`` as a whole: header values are often credentials too.
    extra_headers: dict[str, str] = Field(default_factory=dict, repr=False)
    meta: dict[str, Any] = Field(default_factory=dict, alias="_meta")

    @field_serializer("bearer_token")
    def _reveal(self, token: SecretStr | None) -> str | None:
        return token.get_secret_value() if token is not None else None


class E2AEnvelope(BaseModel):
    """One request to an agent (docs/specs/e2a.md §4). ``params`` is the one business dict."""

    model_config = _CONFIG
    protocol_version: str = E2A_PROTOCOL_VERSION
    provenance: E2AProvenance = Field(default_factory=E2AProvenance)
    request_id: str | None = None
    jsonrpc_id: str | int | None = None
    correlation_id: str | None = None
    task_id: str | None = None
    context_id: str | None = None
    session_id: str | None = None
    message_id: str | None = None
    timestamp: Timestamp | None = None
    identity_origin: IdentityOrigin = "user"
    channel: str | None = None
    user_id: str | None = None
    source_agent_id: str | None = None
    method: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    ext_method: str | None = None
    session_update_kind: str | None = None
    is_stream: StrictBool = False
    expected_output_modes: list[str] = Field(default_factory=list)
    auth: E2AAuth | None = None
    channel_context: dict[str, Any] = Field(default_factory=dict)
    a2a_metadata: dict[str, Any] = Field(default_factory=dict)
    acp_meta: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any) -> E2AEnvelope:
        raw = _migrated_envelope(_mapping(data, "E2A envelope"))
        check_protocol_version(raw.get("protocol_version"))
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            raise format_error("E2A envelope", exc) from None

    def to_dict(self) -> dict[str, Any]:
        return _compact(
            self.model_dump(mode="json", by_alias=True),
            keep=("protocol_version", "provenance", "params", "is_stream", "identity_origin"),
        )


class E2AResponse(BaseModel):
    """One outbound record of an agent (docs/specs/e2a.md §12), streaming chunks included.

    Layers: L1 the ids, ``sequence``, ``is_final``, ``status``; L2 ``response_kind`` +
    ``body``; L3 ``projections`` (pre-built ACP / A2A JSON), auxiliary only: nothing in
    this package reads them.
    """

    model_config = _CONFIG
    protocol_version: str = E2A_PROTOCOL_VERSION
    response_id: NonEmpty
    request_id: NonEmpty
    sequence: Annotated[StrictInt, Field(ge=0)]
    is_final: StrictBool
    status: ResponseStatus = STATUS_IN_PROGRESS
    response_kind: NonEmpty
    timestamp: Timestamp = Field(default_factory=utc_now)
    provenance: E2AProvenance = Field(default_factory=E2AProvenance)
    body: dict[str, Any] = Field(default_factory=dict)
    jsonrpc_id: str | int | None = None
    correlation_id: str | None = None
    task_id: str | None = None
    context_id: str | None = None
    session_id: str | None = None
    #: For chunks: the id of the message they belong to (the LLM response id).
    message_id: str | None = None
    is_stream: StrictBool = False
    #: ``None`` reads as ``agent``, the origin of every response (docs/specs/e2a.md §12.4).
    identity_origin: IdentityOrigin | None = None
    channel: str | None = None
    user_id: str | None = None
    source_agent_id: str | None = None
    method: str | None = None
    projections: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    channel_context: dict[str, Any] = Field(default_factory=dict)
    a2a_metadata: dict[str, Any] = Field(default_factory=dict)
    acp_meta: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any) -> E2AResponse:
        """Read one record and check it on its own (kind/body/status, docs/specs/e2a.md §12.2);
        the rules across records are :class:`~trpc_bridge.codecs.e2a.rules.StreamChecker`'s."""
        raw = dict(_mapping(data, "E2A response"))
        if "channel" not in raw and "channel_id" in raw:
            raw["channel"] = raw["channel_id"]
        missing = [k for k in _READ_REQUIRED_KEYS if raw.get(k) is None]
        if missing:
            raise E2AFormatError(f"E2A response: missing required field(s) {', '.join(missing)}")
        check_protocol_version(raw.get("protocol_version"))
        try:
            response = cls.model_validate(raw)
        except ValidationError as exc:
            raise format_error("E2A response", exc) from None
        check_record(response.status, response.response_kind, response.body)
        return response

    def to_dict(self) -> dict[str, Any]:
        return _compact(self.model_dump(mode="json", by_alias=True), keep=_REQUIRED_RESPONSE_KEYS)


#: docs/specs/e2a.md §12.4: the L1 fields every response carries.
_REQUIRED_RESPONSE_KEYS = (
    "protocol_version",
    "response_id",
    "request_id",
    "sequence",
    "is_final",
    "status",
    "response_kind",
    "timestamp",
    "provenance",
    "body",
)
#: Of those, the ones a reader cannot default: ``protocol_version`` (1.0), ``provenance``
#: (native E2A) and ``body`` (empty) can be.
_READ_REQUIRED_KEYS = tuple(
    k for k in _REQUIRED_RESPONSE_KEYS if k not in ("protocol_version", "provenance", "body")
)


def check_protocol_version(value: Any) -> None:
    """``None`` means ours; any ``1.x`` is read (newer minors only add fields)."""
    if value is None:
        return
    if not isinstance(value, str):
        raise E2AFormatError(f"protocol_version must be a string, got {type(value).__name__}")
    ours = E2A_PROTOCOL_VERSION.split(".", 1)[0]
    if value.strip().split(".", 1)[0] != ours:
        raise E2AVersionError(
            f"unsupported E2A protocol_version {value[:32]!r} (this bridge reads {ours}.x)"
        )


def _mapping(data: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise E2AFormatError(f"{what} must be a JSON object, got {type(data).__name__}")
    return data


def _migrated_envelope(data: Mapping[str, Any]) -> dict[str, Any]:
    """docs/specs/e2a.md §9: the legacy ``AgentRequest`` keys mapped onto the current ones."""
    raw = dict(data)
    for old, new in (("channel_id", "channel"), ("req_method", "method")):
        if raw.get(new) is None and raw.get(old) is not None:
            raw[new] = raw[old]
    legacy_meta = raw.get("metadata")
    if isinstance(legacy_meta, Mapping) and legacy_meta and not raw.get("channel_context"):
        raw["channel_context"] = dict(legacy_meta)
    payload = raw.get("payload")
    if isinstance(payload, Mapping) and payload:
        params = raw.get("params")
        merged = dict(params) if isinstance(params, Mapping) else {}
        for key, value in payload.items():
            merged.setdefault(key, value)
        raw["params"] = merged
    if raw.get("binding") is not None:
        raw["provenance"] = _migrated_binding(raw.get("provenance"), raw["binding"])
    return raw


def _migrated_binding(provenance: Any, binding: Any) -> Any:
    if provenance is not None and not isinstance(provenance, Mapping):
        return provenance  # let validation report it
    prov = dict(provenance or {})
    details = dict(prov.get("details") or {})
    if isinstance(binding, Mapping):  # an enum serialised as {"value": …}
        binding = binding.get("value")
    name = str(binding)
    details.setdefault("migrated_from_binding", name)
    prov["details"] = details
    if prov.get("source_protocol", SOURCE_E2A) == SOURCE_E2A and name in (SOURCE_ACP, SOURCE_A2A):
        prov["source_protocol"] = name
    return prov


def _compact(dumped: dict[str, Any], *, keep: tuple[str, ...]) -> dict[str, Any]:
    """Drop empty top-level fields (``None``, ``{}``, ``[]``, ``is_stream: false``) except
    ``keep``; the provenance keeps ``source_protocol`` and its non-empty fields."""
    out: dict[str, Any] = {}
    for key, value in dumped.items():
        if key == "provenance":
            value = {k: v for k, v in value.items() if k == "source_protocol" or _present(v)}
        elif key == "auth" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if _present(v)}
        if key in keep or (_present(value) and not (key == "is_stream" and value is False)):
            out[key] = value
    return out


def _present(value: Any) -> bool:
    return value is not None and value != {} and value != []
