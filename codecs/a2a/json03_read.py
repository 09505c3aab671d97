"""A2A 0.3 JSON → a2a-sdk protobuf, without pydantic: the reverse of
:mod:`~trpc_bridge.codecs.a2a.json03`.

a2a-sdk reads 0.3 by validating the JSON with its pydantic 0.3 models and converting
those (``a2a.compat.v0_3.conversions.to_core_*``): most of the cost of a relayed frame
that is not a text delta, and a tenth of a served ``message/send``. This module builds the
same protobuf straight from the JSON — but only for JSON in the plain shape A2A 0.3
writes: known keys only (camelCase), each of its own JSON type, states and roles
spelled as 0.3 spells them, file parts by URI. Anything else raises :class:`NotPlain`,
and the caller takes a2a-sdk's path, which says what is wrong with it, or reads what it
can. ``tests/codecs/test_json03_read.py`` holds both paths to the same protobuf.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf.struct_pb2 import Struct

from trpc_bridge.codecs.a2a.proto_struct import fill_struct


class NotPlain(ValueError):
    """The JSON is not in the plain shape this module reads (see the module doc)."""


_ROLES = {"user": Role.ROLE_USER, "agent": Role.ROLE_AGENT}
_STATES = {
    "unknown": TaskState.TASK_STATE_UNSPECIFIED,
    "submitted": TaskState.TASK_STATE_SUBMITTED,
    "working": TaskState.TASK_STATE_WORKING,
    "completed": TaskState.TASK_STATE_COMPLETED,
    "failed": TaskState.TASK_STATE_FAILED,
    "canceled": TaskState.TASK_STATE_CANCELED,
    "input-required": TaskState.TASK_STATE_INPUT_REQUIRED,
    "rejected": TaskState.TASK_STATE_REJECTED,
    "auth-required": TaskState.TASK_STATE_AUTH_REQUIRED,
}
_MESSAGE_KEYS = frozenset(
    {
        "contextId",
        "extensions",
        "kind",
        "messageId",
        "metadata",
        "parts",
        "referenceTaskIds",
        "role",
        "taskId",
    }
)
_TEXT_KEYS = frozenset({"kind", "text", "metadata"})
_DATA_KEYS = frozenset({"kind", "data", "metadata"})
_FILE_KEYS = frozenset({"kind", "file", "metadata"})
_URI_KEYS = frozenset({"uri", "mimeType", "name"})
_ARTIFACT_KEYS = frozenset({"artifactId", "name", "description", "parts", "metadata", "extensions"})
_ARTIFACT_UPDATE_KEYS = frozenset(
    {"append", "artifact", "contextId", "kind", "lastChunk", "metadata", "taskId"}
)
_STATUS_KEYS = frozenset({"message", "state", "timestamp"})
_STATUS_UPDATE_KEYS = frozenset({"contextId", "final", "kind", "metadata", "status", "taskId"})
_PARAMS_KEYS = frozenset({"message", "configuration", "metadata"})
_CONFIGURATION_KEYS = frozenset({"acceptedOutputModes", "blocking", "historyLength"})


def _keys(document: Any, allowed: frozenset[str]) -> dict[str, Any]:
    if type(document) is not dict or not document.keys() <= allowed:
        raise NotPlain("unknown keys")
    return document


def _str(document: dict[str, Any], key: str, *, required: bool = False) -> str:
    value = document.get(key)
    if type(value) is str:
        return value
    if value is None and not required and key not in document:
        return ""
    raise NotPlain(key)


def _strs(document: dict[str, Any], key: str) -> list[str]:
    value = document.get(key)
    if value is None and key not in document:
        return []
    if type(value) is not list or any(type(v) is not str for v in value):
        raise NotPlain(key)
    return value


def _bool(document: dict[str, Any], key: str) -> bool | None:
    value = document.get(key)
    if value is None and key not in document:
        return None
    if type(value) is not bool:
        raise NotPlain(key)
    return value


def _map(document: dict[str, Any], key: str) -> dict[str, Any] | None:
    """An optional object (``None``: absent)."""
    value = document.get(key)
    if value is None and key not in document:
        return None
    if type(value) is not dict:
        raise NotPlain(key)
    return value


def _fill(target: Struct, values: dict[str, Any]) -> None:
    """``ParseDict(values, target)``: the Struct set (present) even when ``values`` is
    empty."""
    target.SetInParent()
    fill_struct(target, values)


def _kind(document: dict[str, Any], kind: str) -> None:
    if document.get("kind", kind) != kind:
        raise NotPlain("kind")


def _part(document: Any, part: Part) -> None:
    kind = document.get("kind") if type(document) is dict else None
    if kind == "text":
        _keys(document, _TEXT_KEYS)
        part.text = _str(document, "text", required=True)
        metadata = _map(document, "metadata")
        if metadata is not None:
            _fill(part.metadata, metadata)
    elif kind == "data":
        _keys(document, _DATA_KEYS)
        data = _map(document, "data")
        metadata = _map(document, "metadata")
        if data is None or (metadata is not None and "data_part_compat" in metadata):
            raise NotPlain("data")
        if metadata:
            _fill(part.metadata, metadata)
        _fill(part.data.struct_value, data)
    elif kind == "file":
        _keys(document, _FILE_KEYS)
        file = _keys(document.get("file"), _URI_KEYS)
        part.url = _str(file, "uri", required=True)
        if media := _str(file, "mimeType"):
            part.media_type = media
        if name := _str(file, "name"):
            part.filename = name
        metadata = _map(document, "metadata")
        if metadata is not None:
            _fill(part.metadata, metadata)
    else:
        raise NotPlain("part kind")


def _parts(document: dict[str, Any], add: Callable[[], Part]) -> None:
    parts = document.get("parts")
    if type(parts) is not list:
        raise NotPlain("parts")
    for item in parts:
        _part(item, add())


def message(document: Any, target: Message | None = None) -> Message:
    """A 0.3 message as ``to_core_message`` makes it."""
    document = _keys(document, _MESSAGE_KEYS)
    _kind(document, "message")
    out = target if target is not None else Message()
    out.message_id = _str(document, "messageId", required=True)
    role = _ROLES.get(document.get("role"))
    if role is None:
        raise NotPlain("role")
    out.context_id = _str(document, "contextId")
    out.task_id = _str(document, "taskId")
    if references := _strs(document, "referenceTaskIds"):
        out.reference_task_ids.extend(references)
    out.role = role
    if metadata := _map(document, "metadata"):
        _fill(out.metadata, metadata)
    if extensions := _strs(document, "extensions"):
        out.extensions.extend(extensions)
    _parts(document, out.parts.add)
    return out


def send_params(params: Any) -> SendMessageRequest:
    """``message/send`` / ``message/stream`` params as ``to_core_send_message_request``
    makes them (a configuration with push settings is not plain here)."""
    params = _keys(params, _PARAMS_KEYS)
    request = SendMessageRequest()
    message(params.get("message"), request.message)
    configuration = _map(params, "configuration")
    if configuration is not None:
        configuration = _keys(configuration, _CONFIGURATION_KEYS)
        settings = request.configuration
        settings.SetInParent()
        if modes := _strs(configuration, "acceptedOutputModes"):
            settings.accepted_output_modes.extend(modes)
        history = configuration.get("historyLength")
        if history is not None:
            if type(history) is not int or not -(2**31) <= history < 2**31:
                raise NotPlain("historyLength")
            if history:  # 0.3's 0 is "all of it": left unset
                settings.history_length = history
        blocking = _bool(configuration, "blocking")
        if blocking is not None:
            settings.return_immediately = not blocking
    if metadata := _map(params, "metadata"):
        _fill(request.metadata, metadata)
    return request


def _artifact(document: Any, out: Artifact) -> None:
    document = _keys(document, _ARTIFACT_KEYS)
    out.artifact_id = _str(document, "artifactId", required=True)
    if name := _str(document, "name"):
        out.name = name
    if description := _str(document, "description"):
        out.description = description
    _parts(document, out.parts.add)
    if metadata := _map(document, "metadata"):
        _fill(out.metadata, metadata)
    if extensions := _strs(document, "extensions"):
        out.extensions.extend(extensions)


def artifact_update(document: Any) -> TaskArtifactUpdateEvent:
    document = _keys(document, _ARTIFACT_UPDATE_KEYS)
    _kind(document, "artifact-update")
    out = TaskArtifactUpdateEvent(
        task_id=_str(document, "taskId", required=True),
        context_id=_str(document, "contextId", required=True),
    )
    _artifact(document.get("artifact"), out.artifact)
    if (append := _bool(document, "append")) is not None:
        out.append = append
    if (last := _bool(document, "lastChunk")) is not None:
        out.last_chunk = last
    if metadata := _map(document, "metadata"):
        _fill(out.metadata, metadata)
    return out


def _status(document: Any, out: TaskStatus) -> None:
    document = _keys(document, _STATUS_KEYS)
    out.SetInParent()
    state = _STATES.get(document.get("state"))
    if state is None:
        raise NotPlain("state")
    if state:
        out.state = state
    if document.get("message") is not None:
        message(document["message"], out.message)
    elif "message" in document:
        raise NotPlain("message")
    if timestamp := _str(document, "timestamp"):
        try:
            out.timestamp.FromJsonString(timestamp.replace("+00:00", "Z"))
        except ValueError:
            raise NotPlain("timestamp") from None


def status_update(document: Any) -> TaskStatusUpdateEvent:
    document = _keys(document, _STATUS_UPDATE_KEYS)
    _kind(document, "status-update")
    if _bool(document, "final") is None:
        raise NotPlain("final")
    out = TaskStatusUpdateEvent(
        task_id=_str(document, "taskId", required=True),
        context_id=_str(document, "contextId", required=True),
    )
    _status(document.get("status"), out.status)
    if metadata := _map(document, "metadata"):
        _fill(out.metadata, metadata)
    return out
