"""A2A results as JSON, in either wire shape, read into one neutral form.

A2A 0.3 JSON (what trpc-agent-go's v0 server writes) discriminates with ``kind``
(``message`` / ``task`` / ``status-update`` / ``artifact-update``; parts ``text`` /
``data`` / ``file``) and spells states in lower case. A2A 1.0 JSON (trpc's v1 server,
a2a-sdk's 1.0 JSON paths) wraps results as
``{"statusUpdate": …}`` and friends, uses ``TASK_STATE_*`` / ``ROLE_*`` and parts
``{text | raw | url | data, filename, mediaType, metadata}``. a2a-sdk's protobuf results
(REST, gRPC) are read into the same frames by :mod:`~trpc_bridge.codecs.a2a.proto_frames`.

Reading is liberal in the way a Go peer's output demands: ``"parts": null`` is an empty
list, fields of the wrong JSON type count as absent, parts of an unknown kind are dropped
with a warning (Go's client drops the whole frame instead). Only a result that is not an
object, or whose kind cannot be recognised at all, raises :class:`CodecError`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from trpc_bridge.codecs.errors import CodecError

log = logging.getLogger(__name__)

JsonMap = Mapping[str, Any]

#: States after which a task produces nothing more in this round (interrupted included).
TERMINAL_STATES = frozenset(
    {"completed", "failed", "canceled", "rejected", "input-required", "auth-required"}
)
#: States that end a run with an error on trpc's client.
FAILURE_STATES = frozenset({"failed", "canceled", "rejected"})


# The exact JSON types are checked first: parsed JSON is made of them, and a type check
# is much cheaper than an ABC's isinstance (these run a dozen times per frame); then
# ``None``, what an absent key reads as.


def as_str(value: Any) -> str:
    if type(value) is str:
        return value
    return value if value is not None and isinstance(value, str) else ""


def as_map(value: Any) -> JsonMap:
    if type(value) is dict:
        return value
    return value if value is not None and isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    if type(value) is list:
        return value
    return value if value is not None and isinstance(value, list) else []


def merged(first: JsonMap, second: JsonMap) -> JsonMap:
    """``second`` overlaid on ``first``: trpc v1 reads an artifact's (a status message's)
    metadata overlaid by its frame's. Mostly one side is empty: the other is the answer,
    as it is (metadata read from the wire is never written to)."""
    if not first:
        return second
    if not second:
        return first
    return {**first, **second}


#: The states in the 0.3 spelling (:func:`normalise_state` leaves them as they are).
_STATES_03 = frozenset({"submitted", "working", "unknown", *TERMINAL_STATES})


def normalise_state(value: Any) -> str:
    """``TASK_STATE_INPUT_REQUIRED`` / ``input-required`` → ``input-required``."""
    if not value:
        return ""
    if type(value) is str and value in _STATES_03:  # already in the 0.3 spelling
        return value
    state = as_str(value).strip()
    if state.upper().startswith("TASK_STATE_"):
        state = state[len("TASK_STATE_") :]
    state = state.lower().replace("_", "-")
    return "canceled" if state == "cancelled" else state


# Frames are values: nothing changes one after it is read (a rewrite makes a new one with
# ``dataclasses.replace``). They are plain slotted dataclasses rather than frozen ones
# because a stream reads two or three per result, and a frozen dataclass costs about twice
# as much to build (their metadata maps were never hashable anyway); for the same reason
# the readers below pass fields by position, in the order of the JSON keys they read.


@dataclass(slots=True)
class WirePart:
    kind: Literal["text", "data", "file"]
    metadata: JsonMap = field(default_factory=dict)
    text: str = ""
    data: Any = None
    #: Inline file content as it travels: base64 text (0.3 ``bytes``, 1.0 ``raw``).
    file_base64: str | None = None
    file_uri: str = ""
    name: str = ""
    mime_type: str = ""


@dataclass(slots=True)
class WireMessage:
    message_id: str
    role: str  # "agent" | "user" | ""
    parts: tuple[WirePart, ...]
    metadata: JsonMap


@dataclass(slots=True)
class WireArtifact:
    artifact_id: str
    parts: tuple[WirePart, ...]
    metadata: JsonMap


@dataclass(slots=True)
class StatusFrame:
    task_id: str
    context_id: str
    state: str
    message: WireMessage | None
    metadata: JsonMap


@dataclass(slots=True)
class ArtifactFrame:
    task_id: str
    context_id: str
    artifact: WireArtifact
    metadata: JsonMap
    last_chunk: bool
    append: bool


@dataclass(slots=True)
class TaskFrame:
    task_id: str
    context_id: str
    state: str
    status_message: WireMessage | None
    history: tuple[WireMessage, ...]
    artifacts: tuple[WireArtifact, ...]
    metadata: JsonMap


Frame = WireMessage | TaskFrame | StatusFrame | ArtifactFrame


# --- parts ----------------------------------------------------------------------------


def _part_kind(raw: JsonMap) -> str:
    kind = raw.get("kind")
    if isinstance(kind, str):
        return kind
    # 1.0 shape (and 0.3 parts without `kind`, which a2a-sdk also accepts).
    for key, name in (("text", "text"), ("data", "data"), ("file", "file")):
        if key in raw:
            return name
    if "raw" in raw or "url" in raw:
        return "file"
    return ""


#: A file part's content, URI, name and media type keys: in 0.3's ``file`` object, and in
#: a 1.0 part.
_FILE_KEYS_03 = ("bytes", "uri", "name", "mimeType")
_FILE_KEYS_10 = ("raw", "url", "filename", "mediaType")


def read_part(raw: Any) -> WirePart | None:
    """One part, or ``None`` (with a warning) when it is not a part this bridge knows."""
    part = as_map(raw)
    metadata = as_map(part.get("metadata"))
    kind = _part_kind(part)
    if kind == "text":
        return WirePart("text", metadata, as_str(part.get("text")))
    if kind == "data":
        return WirePart("data", metadata, "", part.get("data"))
    if kind == "file":
        file = as_map(part.get("file"))
        # 0.3: {"file": {"bytes" | "uri", "name", "mimeType"}}; 1.0: the part itself.
        fields, (content_key, uri_key, name_key, mime_key) = (
            (file, _FILE_KEYS_03) if file else (part, _FILE_KEYS_10)
        )
        content = fields.get(content_key)
        return WirePart(
            "file",
            metadata,
            file_base64=content if isinstance(content, str) else None,
            file_uri=as_str(fields.get(uri_key)),
            name=as_str(fields.get(name_key)),
            mime_type=as_str(fields.get(mime_key)),
        )
    log.warning("skipping A2A part of unknown kind %r", part.get("kind", sorted(part)))
    return None


def read_parts(raw: Any) -> tuple[WirePart, ...]:
    items = as_list(raw)  # `"parts": null` reads as no parts
    if not items:
        return ()
    return tuple([part for item in items if (part := read_part(item)) is not None])


# --- results --------------------------------------------------------------------------


def _role(value: Any) -> str:
    role = as_str(value).lower()
    return role[len("role_") :] if role.startswith("role_") else role


def read_message(raw: Any) -> WireMessage:
    msg = as_map(raw)
    return WireMessage(
        as_str(msg.get("messageId")),
        _role(msg.get("role")),
        read_parts(msg.get("parts")),
        as_map(msg.get("metadata")),
    )


def _optional_message(raw: Any) -> WireMessage | None:
    return None if raw is None or not isinstance(raw, Mapping) else read_message(raw)


def _read_artifact(raw: Any) -> WireArtifact:
    artifact = as_map(raw)
    return WireArtifact(
        as_str(artifact.get("artifactId")),
        read_parts(artifact.get("parts")),
        as_map(artifact.get("metadata")),
    )


def _read_status(raw: JsonMap) -> StatusFrame:
    status = as_map(raw.get("status"))
    return StatusFrame(
        as_str(raw.get("taskId")),
        as_str(raw.get("contextId")),
        normalise_state(status.get("state")),
        _optional_message(status.get("message")),
        as_map(raw.get("metadata")),
    )


def _read_artifact_update(raw: JsonMap) -> ArtifactFrame:
    return ArtifactFrame(
        as_str(raw.get("taskId")),
        as_str(raw.get("contextId")),
        _read_artifact(raw.get("artifact")),
        as_map(raw.get("metadata")),
        raw.get("lastChunk") is True,
        raw.get("append") is True,
    )


def _read_task(raw: JsonMap) -> TaskFrame:
    status = as_map(raw.get("status"))
    return TaskFrame(
        as_str(raw.get("id")),
        as_str(raw.get("contextId")),
        normalise_state(status.get("state")),
        _optional_message(status.get("message")),
        tuple(read_message(m) for m in as_list(raw.get("history"))),
        tuple(_read_artifact(a) for a in as_list(raw.get("artifacts"))),
        as_map(raw.get("metadata")),
    )


_FRAME_TYPES = frozenset({WireMessage, TaskFrame, StatusFrame, ArtifactFrame})

_BY_KIND: dict[str, Callable[[JsonMap], Frame]] = {
    "message": read_message,
    "task": _read_task,
    "status-update": _read_status,
    "artifact-update": _read_artifact_update,
}
# 1.0 wrapper keys (ProtoJSON camelCase, plus the proto field names for good measure).
_BY_WRAPPER = {
    "message": "message",
    "task": "task",
    "statusUpdate": "status-update",
    "status_update": "status-update",
    "artifactUpdate": "artifact-update",
    "artifact_update": "artifact-update",
}


def _unwrapped_kind(result: JsonMap) -> str:
    """The kind of a bare 1.0 object (``GetTask`` returns a Task without a wrapper)."""
    if "artifact" in result:
        return "artifact-update"
    if "messageId" in result and "status" not in result:
        return "message"
    if "status" in result:
        return "task" if "id" in result else "status-update"
    return ""


def read_result(result: Any) -> Frame:
    """A JSON-RPC ``result`` (or a REST body / a dumped ``StreamResponse``) as a frame; a
    frame already read (e.g. rewritten by :mod:`~trpc_bridge.codecs.dialects.frames`) is
    returned as it is."""
    if type(result) in _FRAME_TYPES:
        return result  # type: ignore[no-any-return]
    if type(result) is not dict and not isinstance(result, Mapping):
        raise CodecError(f"A2A result must be a JSON object, got {type(result).__name__}")
    kind = result.get("kind")
    if isinstance(kind, str):
        reader = _BY_KIND.get(kind)
        if reader is None:
            raise CodecError(f"unknown A2A result kind {kind!r}")
        return reader(result)
    for key, wrapped_kind in _BY_WRAPPER.items():
        inner = result.get(key)
        if isinstance(inner, Mapping) and len(result) == 1:
            return _BY_KIND[wrapped_kind](inner)
    bare = _unwrapped_kind(result)
    if not bare:
        raise CodecError(f"unrecognised A2A result with keys {sorted(result)[:8]}")
    return _BY_KIND[bare](result)
