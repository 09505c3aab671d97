"""The 0.3 writer reads each distinct metadata map once (``json03.metadata_to_json``, keyed
by the map's serialized bytes): what it hands out must be, key order included, what
reading that very Struct gives, however the Struct was built (insertion order, nesting,
deleted keys, a copy, a parse), and nobody may change the shared dict."""

from __future__ import annotations

import random
from typing import Any

from a2a.types import Part, TaskArtifactUpdateEvent
from google.protobuf.struct_pb2 import Struct
from hypothesis import given, settings
from hypothesis import strategies as st
from proto_strategies import json_values, text

from trpc_bridge.codecs.a2a.json03 import (
    json_bytes,
    metadata_to_json,
    part_to_json,
    struct_to_json,
    success_response,
)


def reordered(value: Any, rnd: random.Random) -> Any:
    """``value`` with the keys of every object (nested too) in a shuffled order."""
    if isinstance(value, dict):
        keys = list(value)
        rnd.shuffle(keys)
        return {key: reordered(value[key], rnd) for key in keys}
    if isinstance(value, list):
        return [reordered(item, rnd) for item in value]
    return value


def built(values: dict[str, Any], rnd: random.Random) -> Struct:
    """A Struct of ``values``, filled in a shuffled order, some keys first set to something
    else or added and deleted (another table history)."""
    struct = Struct()
    for key in list(values)[: rnd.randrange(len(values) + 1)]:
        struct.update({key: "earlier"})
    for extra in range(rnd.randrange(3)):
        struct.update({f"\x00gone{extra}": extra})
    struct.update(reordered(values, rnd))
    for extra in range(3):
        if f"\x00gone{extra}" in struct.fields:
            del struct.fields[f"\x00gone{extra}"]
    return struct


def shape(value: Any) -> Any:
    """``value`` with its key order and number types made visible to ``==``."""
    if isinstance(value, dict):
        return [(key, shape(item)) for key, item in value.items()]
    if isinstance(value, list):
        return [shape(item) for item in value]
    return (type(value).__name__, value)


metadata_maps = st.dictionaries(text, json_values, max_size=6)


@settings(max_examples=400, deadline=None)
@given(values=metadata_maps, seeds=st.lists(st.integers(), min_size=1, max_size=4))
def test_a_read_metadata_map_is_the_struct_read(values: dict[str, Any], seeds: list[int]) -> None:
    structs = [built(values, random.Random(seed)) for seed in seeds]
    for struct in list(structs):
        copy = Struct()
        copy.CopyFrom(struct)
        structs += [copy, Struct.FromString(struct.SerializeToString())]
    for _ in range(2):  # the second round reads every map from the cache
        for struct in structs:
            cached, read = metadata_to_json(struct), struct_to_json(struct)
            assert shape(cached) == shape(read)
            assert json_bytes(cached) == json_bytes(read)


def test_a_wrapped_data_part_leaves_the_shared_metadata_alone() -> None:
    part = Part()
    part.data.list_value.extend(["x"])
    part.metadata.update({"type": "function_call"})
    first = part_to_json(part)
    assert first["metadata"] == {"type": "function_call", "data_part_compat": True}
    assert metadata_to_json(part.metadata) == {"type": "function_call"}
    assert part_to_json(part) == first


def test_frames_sharing_metadata_are_each_written_whole() -> None:
    frames = []
    for text_ in ("a", "b"):
        frame = TaskArtifactUpdateEvent(task_id="t", context_id="c")
        frame.metadata.update({"object_type": "preprocessing.basic"})
        frame.artifact.metadata.CopyFrom(frame.metadata)
        frame.artifact.parts.add(text=text_)
        frames.append(frame)
    written = [success_response(frame, 1) for frame in frames]
    assert written[0].replace(b'"a"', b'"b"') == written[1]
    assert written[0].count(b'{"object_type":"preprocessing.basic"}') == 2


def test_the_cache_key_follows_the_iteration_order() -> None:
    """The property above is not vacuous: one map's Structs iterate in several orders
    (table histories), and each order has its own bytes. Which histories change the order
    depends on the process's hash seed, so maps of growing size are tried until one does
    (a single size iterates in one order under some seeds)."""
    orders_seen = 0
    for size in range(6, 40):
        values = {f"key{i}": "value" for i in range(size)}
        bytes_of: dict[tuple[str, ...], set[bytes]] = {}
        for seed in range(100):
            struct = built(values, random.Random(seed))
            bytes_of.setdefault(tuple(struct.fields), set()).add(struct.SerializeToString())
        assert all(len(found) == 1 for found in bytes_of.values())
        assert len(set().union(*bytes_of.values())) == len(bytes_of)
        orders_seen = max(orders_seen, len(bytes_of))
        if orders_seen > 1:
            break
    assert orders_seen > 1
