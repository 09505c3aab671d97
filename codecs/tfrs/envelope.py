"""The tfrs progress envelope (``docs/specs/tfrs-progress.md``, v1): the model, its JSON string
form, and the tolerant reader.

A progress update is one A2A ``working`` status whose message has one Part carrying a
human-readable ``text`` fallback and ``metadata["tfrs"]`` = the envelope as a JSON string
(never a nested object: the string survives ``map``-per-field metadata handling, and a
protobuf ``Struct`` would turn ``seq`` into a float).

Reading never raises: a missing key, broken JSON, an unknown version (``v != 1``), a
missing or unknown ``kind`` / ``status`` (both required, as ``seq`` is) or a payload
without its required field all give a
*pseudo-envelope* ``{kind: "text", payload: {text: <the Part's text>}}`` without a
``seq``, which a consumer shows as plain progress text and never deduplicates.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

#: The Part-metadata key that holds the envelope (decision E1).
METADATA_KEY = "tfrs"
#: The only envelope version this reader understands.
VERSION = 1
#: How a caller asks for progress: this A2A extension (``A2A-Extensions`` header / gRPC
#: metadata, declared on the bridge's card), or ``true`` under this request-metadata key.
EXTENSION_URI = "tfrs-progress"
REQUEST_METADATA_KEY = "tfrs_progress"

Kind = Literal["thinking", "tool_call", "tool_output_append", "text", "error"]
Status = Literal["running", "done", "aborted"]

#: Per kind: the payload field that must be a string, and the one that holds the text
#: subject to the size limits (``None``: the kind has no free text).
REQUIRED_FIELD: dict[str, str] = {
    "thinking": "text",
    "tool_call": "tool",
    "tool_output_append": "chunk",
    "text": "text",
    "error": "message",
}
TEXT_FIELD: dict[str, str | None] = {
    "thinking": "text",
    "tool_call": None,
    "tool_output_append": "chunk",
    "text": "text",
    "error": "message",
}


def _whole_number(value: Any) -> Any:
    """JSON numbers that are whole (``42``, and ``42.0`` after a protobuf ``Struct``);
    booleans and numeric strings are not numbers here."""
    if isinstance(value, (bool, str)):
        raise ValueError("not a number")
    if isinstance(value, float) and value.is_integer() and math.isfinite(value):
        return int(value)
    return value


WholeNumber = Annotated[int, BeforeValidator(_whole_number)]
#: One encoder for every envelope (``json.dumps`` with options builds one per call).
_WIRE_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


class Envelope(BaseModel):
    """One progress block. ``seq`` is ``None`` only in a pseudo-envelope made by a reader
    from a Part's text; a producer always sets it."""

    # Unknown top-level keys of a v1 envelope are ignored (additions within v1).
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    v: WholeNumber = VERSION
    kind: Kind
    stream_key: str | None = Field(default=None, alias="streamKey")
    seq: WholeNumber | None = None
    status: Status = "running"
    payload: dict[str, Any] = Field(default_factory=dict)

    @property
    def pseudo(self) -> bool:
        return self.seq is None

    @property
    def key(self) -> tuple[str, int]:
        """The dedupe key ``(streamKey, seq)``; no streamKey is the single default stream."""
        if self.seq is None:
            raise ValueError("a pseudo-envelope has no (streamKey, seq) key")
        return (self.stream_key or "", self.seq)

    @property
    def text(self) -> str:
        """The block's free text (thinking / text / chunk / error message), or ``""``."""
        field = TEXT_FIELD[self.kind]
        value = self.payload.get(field) if field else None
        return value if isinstance(value, str) else ""

    @property
    def tool(self) -> str:
        value = self.payload.get("tool")
        return value if isinstance(value, str) else ""

    @property
    def tool_call_id(self) -> str:
        value = self.payload.get("tool_call_id")
        return value if isinstance(value, str) else ""

    def to_json(self) -> str:
        """The wire string: compact, UTF-8 kept as is, ``streamKey`` left out when absent."""
        if self.seq is None:
            raise ValueError("a pseudo-envelope is never written")
        wire: dict[str, Any] = {"v": self.v, "kind": self.kind}
        if self.stream_key is not None:
            wire["streamKey"] = self.stream_key
        wire.update(seq=self.seq, status=self.status, payload=self.payload)
        return _WIRE_JSON.encode(wire)


def pseudo_envelope(text: str) -> Envelope:
    """What a reader makes of a Part whose envelope is missing or unusable."""
    return Envelope(kind="text", payload={"text": text})


def _check_payload(envelope: Envelope) -> str:
    field = REQUIRED_FIELD[envelope.kind]
    if not isinstance(envelope.payload.get(field), str):
        return f"{envelope.kind} payload without a string {field!r}"
    return ""


def parse_envelope(raw: Any) -> tuple[Envelope | None, str]:
    """The envelope in a metadata value, or ``None`` and why it cannot be used.

    ``raw`` is the JSON string (the wire form); an object is also read, for producers
    that put the envelope into the metadata ``Struct`` directly.
    """
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            return None, f"broken JSON: {exc}"
    if not isinstance(raw, Mapping):
        return None, f"envelope is a JSON {type(raw).__name__}, not an object"
    version = raw.get("v")
    with contextlib.suppress(ValueError):
        version = _whole_number(version)
    if version != VERSION:
        return None, f"unknown envelope version {raw.get('v')!r}"
    try:
        envelope = Envelope.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return None, f"invalid envelope: {where}: {first['msg']}"
    if envelope.seq is None:
        return None, "invalid envelope: seq missing"
    if "status" not in raw:  # required: the model's default is for pseudo-envelopes only
        return None, "invalid envelope: status missing"
    problem = _check_payload(envelope)
    return (None, problem) if problem else (envelope, "")


#: The reason :func:`read_envelope` gives for a Part without a ``tfrs`` key.
NO_ENVELOPE = "no envelope"


def read_envelope(text: str, metadata: Mapping[str, Any]) -> tuple[Envelope, str]:
    """The envelope of one Part (its ``text`` and ``metadata``), never raising: a usable
    envelope and ``""``, or a pseudo-envelope of ``text`` and the reason
    (:data:`NO_ENVELOPE` for a plain-text Part)."""
    if METADATA_KEY not in metadata:
        return pseudo_envelope(text), NO_ENVELOPE
    envelope, problem = parse_envelope(metadata[METADATA_KEY])
    return (envelope, "") if envelope is not None else (pseudo_envelope(text), problem)
