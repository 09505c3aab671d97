"""A2A 1.0 request JSON checked field by field, before protobuf's JSON parser reads it.

a2a-sdk reads JSON-RPC params, REST bodies and REST query parameters with protobuf's
``ParseDict(…, ignore_unknown_fields=True)``, which

- drops an enum value it does not know: ``status=BOGUS`` lists every task unfiltered,
  ``"role": "user"`` (the 0.3 spelling) sends a message of no role;
- drops a key it does not know, which A2A 1.0 §5.7 asks for (forward compatibility) —
  except that in a message sent, A2A 0.3's own keys mean the caller wrote the 0.3 shape to
  the 1.0 binding, and dropping them loses what it said: a ``{"kind": "file", "file": …}``
  part arrives empty, ``blocking`` and ``pushNotificationConfig`` are not honoured;
- words a value of the wrong type in Python's own terms (``invalid literal for int()
  with base 10: 'abc'``).

:func:`field_problem` says what is wrong in the project's words, naming the field:
``params.status: unknown value 'BOGUS' (one of TASK_STATE_SUBMITTED, …)``. Other unknown
keys are ignored (``docs/specs/a2a.md`` §2). Values the walk accepts are left to
protobuf's parser; the callers quote whatever it still refuses.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.timestamp_pb2 import Timestamp

from trpc_bridge.json_body import dotted_path

_INT32 = (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32)
_INT64 = (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64)
_UINT32 = (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32)
_UINT64 = (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64)
_RANGES = {
    **{t: (-(2**31), 2**31 - 1) for t in _INT32},
    **{t: (-(2**63), 2**63 - 1) for t in _INT64},
    **{t: (0, 2**32 - 1) for t in _UINT32},
    **{t: (0, 2**64 - 1) for t in _UINT64},
}
_FLOATS = (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE)
_INTEGER_TEXT = re.compile(r"-?[0-9]+")
#: Well-known types whose JSON form is not an object of their fields.
_ANY_JSON = frozenset({"google.protobuf.Struct", "google.protobuf.Value"})
_SHOWN = 40  # characters of a client's value quoted back
#: Per 1.0 message type: the keys of its A2A 0.3 counterpart that 1.0 dropped or renamed,
#: and what 1.0 says instead (refused where ``v03_keys``).
V03_KEYS: dict[str, dict[str, str]] = {
    "lf.a2a.v1.Message": {"kind": "a 1.0 message has no kind"},
    "lf.a2a.v1.Part": {
        "kind": "a 1.0 part is text, raw, url or data, without a kind",
        "file": "a 1.0 file part is url or raw, with filename and mediaType",
    },
    "lf.a2a.v1.SendMessageConfiguration": {
        "blocking": "1.0 says returnImmediately, its opposite",
        "pushNotificationConfig": "1.0 says taskPushNotificationConfig",
    },
}


def _quoted(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def field_problem(
    document: Any, descriptor: Descriptor, *, path: str = "", v03_keys: bool = False
) -> str:
    """What is wrong with ``document`` as the JSON of ``descriptor``'s message, as
    ``path.to.field: what``; empty when nothing the walk checks is. ``v03_keys``: A2A 0.3's
    keys (:data:`V03_KEYS`) are refused."""
    return _message(document, descriptor, [path] if path else [], v03_keys)


def _where(path: list[str | int]) -> str:
    return dotted_path(path) or "the request"


def _message(value: Any, descriptor: Descriptor, path: list[str | int], v03_keys: bool) -> str:
    name = descriptor.full_name
    if name in _ANY_JSON:
        return ""
    if name == "google.protobuf.Timestamp":
        return _timestamp(value, path)
    if name.startswith("google.protobuf."):
        return ""  # other well-known types: protobuf's parser says what it wants
    if not isinstance(value, Mapping):
        return f"{_where(path)}: must be an object"
    fields = {f.json_name: f for f in descriptor.fields}
    fields.update({f.name: f for f in descriptor.fields})
    v03 = V03_KEYS.get(name, {}) if v03_keys else {}
    for key, item in value.items():
        field = fields.get(key)
        if field is None:
            if key in v03:
                return f"{_where([*path, key])}: an A2A 0.3 key sent to A2A 1.0 ({v03[key]})"
            continue
        problem = _field(item, field, [*path, key], v03_keys)
        if problem:
            return problem
    return ""


def _field(value: Any, field: FieldDescriptor, path: list[str | int], strict: bool) -> str:
    if value is None:
        return ""  # JSON null: the field's default
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        if not isinstance(value, Mapping):
            return f"{_where(path)}: must be an object"
        entry = field.message_type.fields_by_name["value"]
        for key, item in value.items():
            problem = _single(item, entry, [*path, str(key)], strict)
            if problem:
                return problem
        return ""
    if field.is_repeated:
        if not isinstance(value, list):
            return f"{_where(path)}: must be a list"
        for index, item in enumerate(value):
            problem = _single(item, field, [*path, index], strict)
            if problem:
                return problem
        return ""
    return _single(value, field, path, strict)


def _single(value: Any, field: FieldDescriptor, path: list[str | int], strict: bool) -> str:
    if field.message_type is not None:
        return _message(value, field.message_type, path, strict)
    if field.enum_type is not None:
        return _enum(value, field.enum_type, path)
    kind = field.type
    if kind in _RANGES:
        return _integer(value, _RANGES[kind], path)
    if kind in _FLOATS:
        ok = isinstance(value, int | float | str) and not isinstance(value, bool)
        return "" if ok else f"{_where(path)}: must be a number"
    if kind == FieldDescriptor.TYPE_BOOL:
        return "" if isinstance(value, bool) else f"{_where(path)}: must be true or false"
    if kind == FieldDescriptor.TYPE_BYTES:
        return _base64(value, path)
    return "" if isinstance(value, str) else f"{_where(path)}: must be a string"


def _integer(value: Any, bounds: tuple[int, int], path: list[str | int]) -> str:
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _INTEGER_TEXT.fullmatch(value.strip()):
        number = int(value.strip())
    if number is None:
        return f"{_where(path)}: must be an integer, not {_quoted(value)}"
    low, high = bounds
    if not low <= number <= high:
        return f"{_where(path)}: {number} is out of range ({low} to {high})"
    return ""


def _enum(value: Any, enum: EnumDescriptor, path: list[str | int]) -> str:
    if isinstance(value, str) and value in enum.values_by_name:
        return ""
    if isinstance(value, int) and not isinstance(value, bool) and value in enum.values_by_number:
        return ""
    names = ", ".join(v.name for v in enum.values if v.number != 0)
    return f"{_where(path)}: unknown value {_quoted(value)} (one of {names})"


def _timestamp(value: Any, path: list[str | int]) -> str:
    problem = f"{_where(path)}: must be an RFC 3339 timestamp (2026-01-31T12:00:00Z)"
    if not isinstance(value, str):
        return problem
    try:
        Timestamp().FromJsonString(value)
    except ValueError:
        return problem
    return ""


def _base64(value: Any, path: list[str | int]) -> str:
    if not isinstance(value, str):
        return f"{_where(path)}: must be base64 text"
    padded = value + "=" * (-len(value) % 4)
    try:
        base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return f"{_where(path)}: is not base64"
    return ""
