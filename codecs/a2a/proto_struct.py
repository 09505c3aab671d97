"""Filling a ``google.protobuf.Struct`` from a mapping, fast for the common case.

``Struct.update`` converts every value in Python (``_SetStructValue``: a chain of type
checks per value). The bridge's metadata values are nearly all strings (``object_type``,
``llm_response_id``, ``tag``, …), so a string is written straight into its field and only
other values take ``Struct.update``, one key at a time in the mapping's order: the same
Struct, at about half the cost (``bench/codec.py`` and the unary path of
``bench/vs_go.py`` exercise it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf.struct_pb2 import Struct


def fill_struct(struct: Struct, values: Mapping[str, Any]) -> None:
    """``struct.update(values)``."""
    fields = struct.fields
    for key, value in values.items():
        if type(value) is str:
            fields[key].string_value = value
        else:
            struct.update({key: value})
