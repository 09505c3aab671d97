"""``google.protobuf.Struct`` ⇄ JSON values, fast for the common case.

Filling: ``Struct.update`` converts every value in Python (``_SetStructValue``: a chain of
type checks per value). The bridge's metadata values are nearly all strings
(``object_type``, ``llm_response_id``, ``tag``, …), so a string is written straight into
its field and only other values take ``Struct.update``, one key at a time in the
mapping's order: the same Struct, at about half the cost (``bench/codec.py`` and the unary
path of ``bench/vs_go.py`` exercise it).

Reading: what ``MessageToDict`` makes of a Struct or a Value (numbers as floats, an unset
Value as ``None``, infinities and NaN refused with ``ValueError``), without its
per-field descriptor dispatch. A writer that spells some numbers its own way passes a
``number`` hook (the 0.3 JSON writer does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from google.protobuf.struct_pb2 import Struct, Value


def fill_struct(struct: Struct, values: Mapping[str, Any]) -> None:
    """``struct.update(values)``."""
    fields = struct.fields
    for key, value in values.items():
        if type(value) is str:
            fields[key].string_value = value
        else:
            struct.update({key: value})


def _plain(number: float) -> Any:
    return number


def struct_to_json(struct: Struct, number: Callable[[float], Any] = _plain) -> dict[str, Any]:
    """``MessageToDict(struct)``; ``number`` turns each finite number into what is kept."""
    fields = struct.fields
    out: dict[str, Any] = {}
    # Keys then lookups: the map's ``items()`` is the ABC's generic view, twice the cost.
    for key in fields:
        value = fields[key]
        # Nearly every value is a non-empty string, and only a string Value has one: no
        # ``WhichOneof`` and no call for it ("" may be the default of another kind).
        text = value.string_value
        out[key] = text if text else value_to_json(value, number)
    return out


def value_to_json(value: Value, number: Callable[[float], Any] = _plain) -> Any:
    """``MessageToDict`` of one ``Value`` (``None`` when unset)."""
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value
    if kind == "struct_value":
        return struct_to_json(value.struct_value, number)
    if kind == "bool_value":
        return value.bool_value
    if kind == "number_value":
        found = value.number_value
        if math.isinf(found) or math.isnan(found):
            raise ValueError(f"Fail to serialize {found} for Value.number_value")
        return number(found)
    if kind == "list_value":
        return [value_to_json(item, number) for item in value.list_value.values]
    return None
