"""The direct read of a 0.3 ``message/send`` (``server/a2a/send03.py``) is a2a-sdk's:
whenever it takes a request, the SDK's 0.3 model takes it too and converts it to the same
protobuf (same bytes, so the same fields present); whenever the SDK refuses a request, it
declines it. And :func:`parse_jsonrpc` answers every body as it does without the direct
read and without skipping the walk the parse made needless (``checked_by_parsing``).

Generated requests are mostly of the shape clients send, each then possibly spoilt in one
place: another part kind, a snake_case or unknown member, a value of another JSON type
(what pydantic coerces, what it refuses), an integer past 32 bits, a lone surrogate,
nesting past the depth limit.
"""

from __future__ import annotations

import json
from typing import Any
from unittest import mock

from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as types_v03
from a2a.types import SendMessageRequest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from trpc_bridge.json_body import MAX_DEPTH
from trpc_bridge.server.a2a import jsonrpc_request
from trpc_bridge.server.a2a.jsonrpc_request import JsonRpcCall, parse_jsonrpc
from trpc_bridge.server.a2a.send03 import direct_send_request

text = st.text(max_size=8)
_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(2**70), max_value=2**70),
    text,
)
json_values = st.recursive(
    _leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=6,
)
objects = st.dictionaries(text, json_values, max_size=3)
#: Values of another type than the one a member takes (some pydantic coerces).
odd = st.one_of(_leaf, st.lists(_leaf, max_size=2), objects, st.just("user"), st.just(7))


def _maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.just(_ABSENT), st.none(), value)


_ABSENT = object()


@st.composite
def _object(draw: st.DrawFn, members: dict[str, st.SearchStrategy[Any]]) -> dict[str, Any]:
    out = {}
    for key, strategy in members.items():
        value = draw(strategy)
        if value is not _ABSENT:
            out[key] = value
    return out


def _part() -> st.SearchStrategy[dict[str, Any]]:
    text_part = _object(
        {"kind": st.sampled_from([_ABSENT, "text"]), "text": text, "metadata": _maybe(objects)}
    )
    data_part = _object({"kind": st.just("data"), "data": objects})
    file_part = _object(
        {"kind": st.just("file"), "file": st.just({"uri": "http://x/y", "mimeType": "text/plain"})}
    )
    return st.one_of(text_part, text_part, text_part, data_part, file_part)


def _message() -> st.SearchStrategy[dict[str, Any]]:
    return _object(
        {
            "kind": st.sampled_from([_ABSENT, "message"]),
            "messageId": text,
            "role": st.sampled_from(["user", "agent"]),
            "parts": st.lists(_part(), max_size=3),
            "contextId": _maybe(text),
            "taskId": _maybe(text),
            "metadata": _maybe(objects),
            "extensions": _maybe(st.lists(text, max_size=2)),
            "referenceTaskIds": _maybe(st.lists(text, max_size=2)),
        }
    )


def _configuration() -> st.SearchStrategy[dict[str, Any]]:
    return _object(
        {
            "acceptedOutputModes": _maybe(st.lists(text, max_size=2)),
            "blocking": _maybe(st.booleans()),
            "historyLength": _maybe(st.integers(min_value=-5, max_value=2**32)),
        }
    )


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    params = draw(
        _object(
            {
                "message": _message(),
                "configuration": _maybe(_configuration()),
                "metadata": _maybe(objects),
            }
        )
    )
    document = {
        "jsonrpc": "2.0",
        "id": draw(st.one_of(st.integers(-(2**40), 2**40), text)),
        "method": draw(st.sampled_from(["message/send", "message/stream"])),
        "params": params,
    }
    if draw(st.integers(0, 2)) == 0:
        _spoil(draw, document)
    return document


def _spoil(draw: st.DrawFn, document: dict[str, Any]) -> None:
    """Change one thing somewhere in ``document``: a member's value, a new member, a
    snake_case spelling, a removed member."""
    containers: list[dict[str, Any]] = []

    def collect(value: Any) -> None:
        if isinstance(value, dict):
            containers.append(value)
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    collect(document["params"])
    target = draw(st.sampled_from(containers))
    how = draw(st.sampled_from(["value", "extra", "snake", "drop"]))
    keys = sorted(target)
    if how == "extra" or not keys:
        target[draw(st.sampled_from(["extra", "pushNotificationConfig", "message_id", "file"]))] = (
            draw(odd)
        )
        return
    key = draw(st.sampled_from(keys))
    if how == "value":
        target[key] = draw(odd)
    elif how == "snake":
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
        target[snake] = target.pop(key)
    else:
        del target[key]


def _sdk(document: dict[str, Any]) -> SendMessageRequest | None:
    """What a2a-sdk's 0.3 path makes of ``document`` (None: it refuses it)."""
    model: type[Any] = (
        types_v03.SendMessageRequest
        if document["method"] == "message/send"
        else types_v03.SendStreamingMessageRequest
    )
    try:
        return conversions.to_core_send_message_request(model.model_validate(document))
    except (ValidationError, ValueError, TypeError, OverflowError):
        return None


@settings(max_examples=600, deadline=None)
@given(document=requests())
def test_direct_read_is_the_sdks(document: dict[str, Any]) -> None:
    direct = direct_send_request(json.loads(json.dumps(document)))
    sdk = _sdk(json.loads(json.dumps(document)))
    if direct is None:
        return  # declined: the SDK's path answers, as before
    assert sdk is not None, "taken here but refused by the SDK"
    assert direct == sdk
    assert direct.SerializeToString(deterministic=True) == sdk.SerializeToString(deterministic=True)


def test_the_usual_request_is_read_directly() -> None:
    document = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message",
                "messageId": "m1",
                "role": "user",
                "parts": [{"kind": "text", "text": "hi"}],
                "metadata": {"interaction_spec_version": "0.1"},
            },
            "configuration": {"blocking": True, "historyLength": 2},
        },
    }
    direct = direct_send_request(document)
    assert direct is not None and direct == _sdk(document)


def _reference(body: bytes, version: str | None) -> object:
    """:func:`parse_jsonrpc` as it was: the SDK's path for every request, the walk always."""
    with (
        mock.patch.object(jsonrpc_request, "direct_send_request", lambda _: None),
        mock.patch.object(jsonrpc_request, "checked_by_parsing", lambda _: False),
    ):
        return parse_jsonrpc(body, version)


def _same(ours: object, reference: object) -> None:
    if isinstance(ours, JsonRpcCall) and isinstance(reference, JsonRpcCall):
        assert (ours.id, ours.method, ours.wire, ours.body) == (
            reference.id,
            reference.method,
            reference.wire,
            reference.body,
        )
        assert ours.request.SerializeToString(deterministic=True) == (
            reference.request.SerializeToString(deterministic=True)
        )
    else:
        assert ours == reference


_SURROGATE = '"\\ud800"'


@settings(max_examples=400, deadline=None)
@given(
    document=requests(),
    mangle=st.sampled_from(["none", "surrogate", "deep", "escape"]),
    version=st.sampled_from([None, "0.3", "1.0"]),
)
def test_parse_answers_as_before(
    document: dict[str, Any], mangle: str, version: str | None
) -> None:
    body = json.dumps(document, ensure_ascii=mangle == "escape")
    if mangle == "surrogate":  # a lone surrogate escape in the message id or a text
        body = body.replace('"messageId": "', '"messageId": ' + _SURROGATE[:-1], 1)
    elif mangle == "deep":
        deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH
        body = body.replace('"params": {', f'"params": {{"deep": {deep}, ', 1)
    raw = body.encode("utf-8", "surrogatepass")
    _same(parse_jsonrpc(raw, version), _reference(raw, version))
