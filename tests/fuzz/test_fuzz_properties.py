"""Hypothesis over every target of :mod:`fuzz_targets`: random bytes, JSON-shaped bytes
and mutated real frames never raise anything but the target's typed errors, and each
call stays within a memory bound proportional to its input."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import pytest
from fuzz_targets import BYTE_SEEDS, TARGETS, FuzzTarget, json_seeds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: Peak Python allocation allowed per call: a fixed floor plus this many bytes per input
#: byte (decoders build a few objects per byte; anything far beyond is a blow-up).
MEMORY_FLOOR = 8 * 1024 * 1024
MEMORY_PER_BYTE = 200

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["", "kind", "message", "task", "status-update", "artifact-update", "\ud800"]),
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=25,
)
_SEEDS = list(json_seeds())
#: Inputs that broke Python's own readers (depth, digits, encodings), at random sizes.
_NASTY = st.one_of(
    st.integers(1, 20_000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(1, 20_000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
    st.integers(1, 20_000).map(lambda n: b'{"id":1,"params":' + b"9" * n + b"}"),
    st.sampled_from([b"\xff", b'"\\ud800"', b"NaN", b"-Infinity", b"\xef\xbb\xbf{}", b"\x00"]),
)


def _mutate(value: Any, choices: st.DataObject) -> Any:
    """``value`` with one random subtree replaced (or dropped), recursively chosen."""
    if isinstance(value, dict) and value and choices.draw(st.booleans()):
        key = choices.draw(st.sampled_from(sorted(value)))
        changed = dict(value)
        if choices.draw(st.booleans()):
            changed[key] = _mutate(value[key], choices)
        elif choices.draw(st.booleans()):
            del changed[key]
        else:
            changed[key] = choices.draw(_json)
        return changed
    if isinstance(value, list) and value and choices.draw(st.booleans()):
        index = choices.draw(st.integers(0, len(value) - 1))
        return [*value[:index], _mutate(value[index], choices), *value[index + 1 :]]
    return choices.draw(_json)


def _bytes_of(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _call(target: FuzzTarget, data: Any) -> None:
    size = len(data) if isinstance(data, bytes) else len(_bytes_of(data))
    tracemalloc.start()
    try:
        target.run(data)
    except target.typed:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < MEMORY_FLOOR + MEMORY_PER_BYTE * size, (target.name, peak, size)


_BYTE_TARGETS = [t for t in TARGETS if not t.json]
_JSON_TARGETS = [t for t in TARGETS if t.json]
_settings = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("target", _BYTE_TARGETS, ids=lambda t: t.name)
@_settings
@given(data=st.binary(max_size=2048) | _NASTY)
def test_random_bytes(target: FuzzTarget, data: bytes) -> None:
    _call(target, data)


@pytest.mark.parametrize("target", _BYTE_TARGETS, ids=lambda t: t.name)
def test_byte_seeds(target: FuzzTarget) -> None:
    for seed in BYTE_SEEDS:
        _call(target, seed)


@pytest.mark.parametrize("target", _BYTE_TARGETS, ids=lambda t: t.name)
@_settings
@given(seed=st.sampled_from(BYTE_SEEDS), cut=st.integers(0, 2048), tail=st.binary(max_size=16))
def test_mutated_byte_seeds(target: FuzzTarget, seed: bytes, cut: int, tail: bytes) -> None:
    _call(target, seed[: len(seed) - cut] + tail)


@pytest.mark.parametrize("target", _BYTE_TARGETS, ids=lambda t: t.name)
@_settings
@given(choices=st.data())
def test_mutated_requests_as_bytes(target: FuzzTarget, choices: st.DataObject) -> None:
    seed = choices.draw(st.sampled_from(_SEEDS))
    request = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": seed}}
    _call(target, _bytes_of(_mutate(request, choices)))


@pytest.mark.parametrize("target", _JSON_TARGETS, ids=lambda t: t.name)
@_settings
@given(choices=st.data())
def test_mutated_frames(target: FuzzTarget, choices: st.DataObject) -> None:
    frames = [_mutate(choices.draw(st.sampled_from(_SEEDS)), choices) for _ in range(3)]
    _call(target, frames if target.name.startswith("A2A stream") else frames[0])


@pytest.mark.parametrize("target", _JSON_TARGETS, ids=lambda t: t.name)
@_settings
@given(value=_json)
def test_random_json(target: FuzzTarget, value: Any) -> None:
    _call(target, value)
