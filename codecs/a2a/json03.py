"""Stream frames (a2a-sdk protobuf) → A2A 0.3 JSON-RPC bytes, without pydantic.

a2a-sdk serves A2A 0.3 by converting every 1.0 protobuf frame into its pydantic 0.3
models (``a2a.compat.v0_3.conversions.to_compat_*``) and dumping those
(``model_dump_json(by_alias=True, exclude_none=True)``): most of the bridge's per-event
cost on a 0.3 stream. This module writes the same bytes straight from the protobuf:

- keys in the 0.3 models' field order (alphabetical by alias), ``None`` fields left out
  exactly where ``exclude_none`` leaves them out (message metadata only when non-empty,
  other metadata whenever the field is set, ``append`` / ``lastChunk`` always);
- ``google.protobuf.Struct`` maps in their own iteration order, as ``MessageToDict``
  reads them (:mod:`~trpc_bridge.codecs.a2a.proto_struct`), numbers as floats;
  infinities and NaN raise ``ValueError`` as there;
- compact JSON, non-ASCII written as UTF-8 (orjson; pydantic-core writes the same).

A unary result (:func:`unary_response`) is written as the SDK's unary path writes it:
``json.dumps`` through Starlette's ``JSONResponse``, the same bytes but for one spelling
(:class:`_SmallNumber`), at a tenth of the cost.

``tests/codecs/test_a2a03_json.py`` checks byte equality with the SDK's path for every
golden vector's frames and for generated ones.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any, cast

import orjson
from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf.struct_pb2 import Struct, Value
from google.protobuf.timestamp_pb2 import Timestamp

from trpc_bridge.codecs.a2a import proto_struct
from trpc_bridge.codecs.a2a.packed import Packed, PackedResult
from trpc_bridge.codecs.a2a.text_delta import TextDelta, TextRun

JsonRpcId = str | int | None
Frame = TaskStatusUpdateEvent | TaskArtifactUpdateEvent | Message | Task

#: 1.0 state → 0.3 spelling (anything else is ``unknown``, as in a2a-sdk).
STATES_03 = {
    TaskState.TASK_STATE_SUBMITTED: "submitted",
    TaskState.TASK_STATE_WORKING: "working",
    TaskState.TASK_STATE_INPUT_REQUIRED: "input-required",
    TaskState.TASK_STATE_COMPLETED: "completed",
    TaskState.TASK_STATE_CANCELED: "canceled",
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_REJECTED: "rejected",
    TaskState.TASK_STATE_AUTH_REQUIRED: "auth-required",
}
#: States whose status-update is ``final`` on the 0.3 wire.
_FINAL = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_REJECTED,
    }
)


#: Below this magnitude (and not zero) Python spells a float with an exponent (``1e-05``)
#: where orjson and pydantic-core write it out (``0.00001``): the one difference between
#: a2a-sdk's two 0.3 writers (``json.dumps`` for unary results, pydantic for stream frames).
_EXPONENT_BELOW = 1e-4


class _SmallNumber(float):
    """A Struct number whose spelling depends on the writer (see :data:`_EXPONENT_BELOW`):
    orjson hands it to the writer's ``default``."""


def _stream_number(value: Any) -> Any:
    if isinstance(value, _SmallNumber):
        return float(value)  # written by orjson itself, as pydantic writes it
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def _unary_number(value: Any) -> Any:
    if isinstance(value, _SmallNumber):
        return orjson.Fragment(float.__repr__(value).encode())  # as json.dumps writes it
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def _number(value: float) -> float:
    """A Struct number as the 0.3 writers need it (see :data:`_EXPONENT_BELOW`)."""
    return _SmallNumber(value) if value and -_EXPONENT_BELOW < value < _EXPONENT_BELOW else value


def struct_to_json(struct: Struct) -> dict[str, Any]:
    return proto_struct.struct_to_json(struct, _number)


def value_to_json(value: Value) -> Any:
    return proto_struct.value_to_json(value, _number)


#: Metadata maps already read (:func:`metadata_to_json`), by their serialized bytes.
_METADATA: dict[bytes, dict[str, Any]] = {}
#: Maps kept at once (cleared when full) and the largest one kept: a stream's metadata
#: maps are few and small (object type, response id, part type).
_MAX_METADATA = 256
_MAX_METADATA_BYTES = 512


def metadata_to_json(struct: Struct) -> dict[str, Any]:
    """:func:`struct_to_json` of a metadata map, read once per distinct map: the same few
    maps (``object_type``, ``llm_response_id``, part types) come on frame after frame,
    and an artifact's is a copy of its update's. Serializing is a quarter of reading,
    and equal bytes are the same entries in the same iteration order (upb serializes a
    map in the order it iterates it), so the dict is what :func:`struct_to_json` would
    make. Shared by every frame that has that map: write it, never change it."""
    key = struct.SerializeToString()
    found = _METADATA.get(key)
    if found is None:
        found = struct_to_json(struct)
        if len(key) <= _MAX_METADATA_BYTES:
            if len(_METADATA) >= _MAX_METADATA:
                _METADATA.clear()
            _METADATA[key] = found
    return found


def part_to_json(part: Part) -> dict[str, Any]:
    which = part.WhichOneof("content")
    metadata = metadata_to_json(part.metadata) if part.HasField("metadata") else None
    if which == "text":
        out: dict[str, Any] = {"kind": "text"}
        if metadata is not None:
            out["metadata"] = metadata
        out["text"] = part.text
        return out
    if which == "data":
        data = value_to_json(part.data)
        if not isinstance(data, dict):  # the SDK's wrapping of a non-object DataPart
            data = {"value": data}
            metadata = {**(metadata or {}), "data_part_compat": True}  # a shared dict
        out = {"data": data, "kind": "data"}
        if metadata is not None:
            out["metadata"] = metadata
        return out
    if which in ("raw", "url"):
        file: dict[str, Any] = {}
        if which == "raw":
            file["bytes"] = base64.b64encode(part.raw).decode("utf-8")
        if part.media_type:
            file["mimeType"] = part.media_type
        if part.filename:
            file["name"] = part.filename
        if which == "url":
            file["uri"] = part.url
        out = {"file": file, "kind": "file"}
        if metadata is not None:
            out["metadata"] = metadata
        return out
    raise ValueError(f"Unknown part content type: {which}")


#: Read once: each ``Role.ROLE_USER`` is a Python ``__getattr__`` call.
_ROLE_USER = Role.ROLE_USER


def message_to_json(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {}
    context_id = message.context_id
    if context_id:
        out["contextId"] = context_id
    if message.extensions:
        out["extensions"] = list(message.extensions)
    out["kind"] = "message"
    out["messageId"] = message.message_id
    if message.metadata.fields:  # non-empty, unlike the other metadata fields (HasField)
        out["metadata"] = metadata_to_json(message.metadata)
    out["parts"] = [part_to_json(p) for p in message.parts]
    if message.reference_task_ids:
        out["referenceTaskIds"] = list(message.reference_task_ids)
    out["role"] = "user" if message.role == _ROLE_USER else "agent"
    task_id = message.task_id
    if task_id:
        out["taskId"] = task_id
    return out


#: The last second :func:`timestamp_json` can write itself (9999-12-31T23:59:59Z).
_LAST_SECOND = 253402300799


def timestamp_json(timestamp: Timestamp) -> str:
    """``timestamp.ToJsonString()`` (RFC 3339, 0, 3, 6 or 9 fractional digits), written
    with ``time.strftime`` rather than through ``datetime`` for a time since 1970: a
    tenth of the cost."""
    seconds, nanos = timestamp.seconds, timestamp.nanos
    if not (0 <= seconds <= _LAST_SECOND and 0 <= nanos < 1_000_000_000):
        written: str = timestamp.ToJsonString()  # its own range checks and errors
        return written
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    if nanos == 0:
        return text + "Z"
    if nanos % 1_000_000 == 0:
        return f"{text}.{nanos // 1_000_000:03d}Z"
    if nanos % 1000 == 0:
        return f"{text}.{nanos // 1000:06d}Z"
    return f"{text}.{nanos:09d}Z"


def status_to_json(status: TaskStatus) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if status.HasField("message"):
        out["message"] = message_to_json(status.message)
    out["state"] = STATES_03.get(status.state, "unknown")
    if status.HasField("timestamp"):
        out["timestamp"] = timestamp_json(status.timestamp)
    return out


def artifact_to_json(artifact: Artifact) -> dict[str, Any]:
    out: dict[str, Any] = {"artifactId": artifact.artifact_id}
    if artifact.description:
        out["description"] = artifact.description
    if artifact.extensions:
        out["extensions"] = list(artifact.extensions)
    if artifact.HasField("metadata"):
        out["metadata"] = metadata_to_json(artifact.metadata)
    if artifact.name:
        out["name"] = artifact.name
    out["parts"] = [part_to_json(p) for p in artifact.parts]
    return out


def artifact_update_to_json(update: TaskArtifactUpdateEvent) -> dict[str, Any]:
    out: dict[str, Any] = {
        "append": update.append,
        "artifact": artifact_to_json(update.artifact),
        "contextId": update.context_id,
        "kind": "artifact-update",
        "lastChunk": update.last_chunk,
    }
    if update.HasField("metadata"):
        out["metadata"] = metadata_to_json(update.metadata)
    out["taskId"] = update.task_id
    return out


def status_update_to_json(update: TaskStatusUpdateEvent) -> dict[str, Any]:
    has_status = update.HasField("status")
    out: dict[str, Any] = {
        "contextId": update.context_id,
        "final": has_status and update.status.state in _FINAL,
        "kind": "status-update",
    }
    if update.HasField("metadata"):
        out["metadata"] = metadata_to_json(update.metadata)
    out["status"] = status_to_json(update.status) if has_status else {"state": "unknown"}
    out["taskId"] = update.task_id
    return out


def task_to_json(task: Task) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if task.artifacts:
        out["artifacts"] = [artifact_to_json(a) for a in task.artifacts]
    out["contextId"] = task.context_id
    if task.history:
        out["history"] = [message_to_json(m) for m in task.history]
    out["id"] = task.id
    out["kind"] = "task"
    if task.HasField("metadata"):
        out["metadata"] = metadata_to_json(task.metadata)
    out["status"] = status_to_json(task.status) if task.HasField("status") else {"state": "unknown"}
    return out


def text_delta_to_json(delta: TextDelta) -> dict[str, Any]:
    """What :func:`artifact_update_to_json` writes for ``delta.to_proto()`` when its
    run's metadata holds strings, bools and nulls only (:func:`_plain`)."""
    run = delta.run
    part: dict[str, Any] = {"kind": "text"}
    if run.part_metadata:
        part["metadata"] = dict(run.part_metadata)
    part["text"] = delta.text
    artifact: dict[str, Any] = {"artifactId": run.artifact_id}
    if run.metadata:
        artifact["metadata"] = dict(run.metadata)
    artifact["parts"] = [part]
    out: dict[str, Any] = {
        "append": run.append,
        "artifact": artifact,
        "contextId": run.context_id,
        "kind": "artifact-update",
        "lastChunk": False,
    }
    if run.metadata:
        out["metadata"] = dict(run.metadata)
    out["taskId"] = run.task_id
    return out


def result_to_json(result: Frame) -> dict[str, Any]:
    """A stream frame (or a unary ``Task``) as the 0.3 ``result`` object."""
    if isinstance(result, TaskArtifactUpdateEvent):
        return artifact_update_to_json(result)
    if isinstance(result, TaskStatusUpdateEvent):
        return status_update_to_json(result)
    if isinstance(result, Message):
        return message_to_json(result)
    return task_to_json(result)


def json_bytes(value: Any) -> bytes:
    """``value``, JSON made of this module's ``*_to_json`` output, written as the 0.3
    stream writer writes it (pydantic's spelling of numbers)."""
    return orjson.dumps(value, default=_stream_number)


def success_response(result: Frame, request_id: JsonRpcId) -> bytes:
    """``{"id":…,"jsonrpc":"2.0","result":…}`` (no ``id`` when it is ``None``)."""
    body: dict[str, Any] = {} if request_id is None else {"id": request_id}
    body["jsonrpc"] = "2.0"
    body["result"] = result_to_json(result)
    return json_bytes(body)


def unary_response(result: Message | Task | PackedResult, request_id: JsonRpcId) -> bytes:
    """``{"id":…,"jsonrpc":"2.0","result":…}``: the bytes of a2a-sdk's 0.3
    ``message/send`` answer (``JSONResponse``, ``json.dumps``: compact, UTF-8, numbers
    as Python spells them). A packed result is written from what it was packed from (its
    metadata maps in their own order, as every Struct map is written in its own)."""
    written = (
        _packed_to_json(result) if isinstance(result, PackedResult) else result_to_json(result)
    )
    body = {"id": request_id, "jsonrpc": "2.0", "result": written}
    return orjson.dumps(body, default=_unary_number)


def _packed_metadata(packed: Packed, struct: Callable[[], Struct]) -> dict[str, Any]:
    """What :func:`struct_to_json` reads from the ``struct()`` the packer filled from
    ``packed.metadata``: that mapping itself when its values are strings (a Struct keeps
    those as they are), else the Struct read back."""
    metadata = packed.metadata
    for value in metadata.values():
        if type(value) is not str:
            return struct_to_json(struct())
    return dict(metadata)


def _packed_message(
    packed: Packed, message_id: str, context_id: str, struct: Callable[[], Struct]
) -> dict[str, Any]:
    """:func:`message_to_json` of an agent message the packer filled (id, role, parts,
    metadata; a Message result also its context)."""
    out: dict[str, Any] = {}
    if context_id:
        out["contextId"] = context_id
    out["kind"] = "message"
    out["messageId"] = message_id
    if packed.metadata:
        out["metadata"] = _packed_metadata(packed, struct)
    out["parts"] = [part_to_json(p) for p in packed.parts] if packed.parts else []
    out["role"] = "agent"
    return out


def _packed_to_json(packed: PackedResult) -> dict[str, Any]:
    """:func:`result_to_json` of ``packed.proto``, without building it (a metadata value
    that is not a string is read back from it: see :func:`_packed_metadata`)."""
    ids, status = packed.ids, packed.status
    if status is None:
        struct = lambda: cast(Message, packed.proto).metadata  # noqa: E731
        return _packed_message(packed.messages[0], ids[0], packed.context_id, struct)

    def task() -> Task:
        return cast(Task, packed.proto)

    *history, last = packed.messages
    artifact: dict[str, Any] = {"artifactId": ids[-1]}
    if last.metadata:
        artifact["metadata"] = _packed_metadata(last, lambda: task().artifacts[0].metadata)
    artifact["parts"] = [part_to_json(p) for p in last.parts]
    out: dict[str, Any] = {"artifacts": [artifact], "contextId": packed.context_id}
    if history:
        out["history"] = [
            _packed_message(p, ids[i], "", lambda i=i: task().history[i].metadata)  # type: ignore[misc]
            for i, p in enumerate(history)
        ]
    out["id"] = packed.task_id
    out["kind"] = "task"
    out["status"] = status_to_json(status)
    return out


#: Stands for the text while a text run's bytes are made (an id or metadata value that
#: holds it too makes that run go without them).
_PLACEHOLDER = "\x00text\x00"
_QUOTED_PLACEHOLDER = orjson.dumps(_PLACEHOLDER)
_PLAIN = (str, bool, type(None))
#: A run written through its protobuf (see :func:`_run_bytes`).
_NO_BYTES = (b"", b"")


def _plain(run: TextRun) -> bool:
    """Every metadata value of ``run`` is a string, a bool or null: its bytes can be made
    from the mappings (a number would be a float once in a Struct: no shortcut)."""
    part = run.part_metadata or {}
    return all(isinstance(v, _PLAIN) for v in (*run.metadata.values(), *part.values()))


def _run_bytes(run: TextRun) -> tuple[bytes, bytes]:
    """The bytes of a ``result`` of ``run`` before and after its (quoted) text;
    :data:`_NO_BYTES` when the run is written through its protobuf instead."""
    if not _plain(run):
        return _NO_BYTES
    whole = orjson.dumps(text_delta_to_json(TextDelta(run, _PLACEHOLDER)))
    before, found, after = whole.partition(_QUOTED_PLACEHOLDER)
    if not found or _QUOTED_PLACEHOLDER in before + after:
        return _NO_BYTES
    return before, after


#: Frames a :class:`StreamWriter` keeps the bytes of (a run's repeated frames are few).
_WRITTEN_KEPT = 16


class StreamWriter:
    """One stream's frames as 0.3 JSON-RPC responses. A text delta costs one JSON string
    encoding: the bytes around its text are made once per run (kept on the
    :class:`~trpc_bridge.codecs.a2a.text_delta.TextRun`) and reused."""

    def __init__(self, request_id: JsonRpcId) -> None:
        self.request_id = request_id
        envelope: dict[str, Any] = {} if request_id is None else {"id": request_id}
        envelope["jsonrpc"] = "2.0"
        envelope["result"] = None
        #: ``{"id":…,"jsonrpc":"2.0","result":`` (the result is the envelope's last key).
        self._head = orjson.dumps(envelope)[: -len(b"null}")]
        #: Protobuf frames written, by identity, with their bytes: a run publishes one
        #: object for every repeat of a frame (its bare updates, ``StreamEncoder.bare``),
        #: and a published frame never changes. The frame is kept: its id stays its own.
        self._written: dict[int, tuple[Frame, bytes]] = {}

    def response(self, frame: Frame | TextDelta) -> bytes:
        if type(frame) is TextDelta:
            run = frame.run
            around = run.json03
            if around is None:
                around = run.json03 = _run_bytes(run)
            if around is not _NO_BYTES:
                return b"".join((self._head, around[0], orjson.dumps(frame.text), around[1], b"}"))
            return self._json(frame.to_proto())  # a new object each time: not kept
        written = self._written.get(id(frame))
        if written is not None and written[0] is frame:
            return written[1]
        data = self._json(frame)  # type: ignore[arg-type]
        if len(self._written) >= _WRITTEN_KEPT:
            self._written.clear()
        self._written[id(frame)] = (frame, data)  # type: ignore[assignment]
        return data

    def _json(self, frame: Frame) -> bytes:
        # :func:`success_response` without its envelope dict: the result is the last key.
        result = result_to_json(frame)
        return b"".join((self._head, orjson.dumps(result, default=_stream_number), b"}"))
