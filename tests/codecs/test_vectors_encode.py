"""Server-side conformance vectors (docs/specs/trpc-interaction.md §8.1, §8.4) against the encode
codec.

Each ``tests/vectors/*.json`` holds agent events (``AgentEvent`` JSON), the result
trpc-agent-go's server writes (``expect``, copied from the reference) and the bridge's
documented deviations. Frames are rendered the way a2a-sdk puts them on the wire: 0.3
JSON through ``to_compat_*`` + ``model_dump(mode="json", by_alias=True,
exclude_none=True)``, 1.0 JSON through ``MessageToDict``. The comparison is exact except
for these normalisations:

- placeholders in ``expect`` (``<uuid>``, ``<ts>``, ``msg-<uuid-A>``, ``task-<…>``) match
  any value of that shape;
- ``"append": false`` equals an absent ``append`` (Go omits it; the SDK always writes it);
- ``"parts": null`` equals ``[]`` (pydantic 0.3 clients reject null);
- the copy of the event metadata on ``artifact.metadata`` (a documented deviation);
- 1.0 JSON only: proto3 JSON (what the SDK writes) leaves out ``false`` and empty lists,
  so Go's ``"lastChunk": false`` / ``"append": false`` / ``"parts": []`` equal absent keys.

Vector-specific deviations are applied only as declared in the vector's ``deviations``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as types_v03
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types import Message, StreamResponse, Task
from a2a.utils.proto_utils import to_stream_response
from google.protobuf.json_format import MessageToDict
from vector_files import VECTORS

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.codecs.encoding import (
    EncodeOptions,
    EncodingRequest,
    RunFrame,
    RunTarget,
    StreamFrame,
    as_proto,
    select_encoding,
)
from trpc_bridge.codecs.trpc.request import message_to_request
from trpc_bridge.codecs.trpc.runs import StreamEncoder, UnaryEncoder, unary_task_id
from trpc_bridge.codecs.trpc.stream_frames import final_artifact_update
from trpc_bridge.events import AgentEvent
from trpc_bridge.server.a2a.card import build_agent_card

# The folder is shared with the client's decode vectors; these are the server's.
ENCODE_VECTORS = sorted(
    p
    for p in VECTORS.glob("*.json")
    if json.loads(p.read_text(encoding="utf-8")).get("direction") in ("encode", "inbound")
)
_TS = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def options_of(vector: dict[str, Any]) -> EncodeOptions:
    raw = dict(vector["options"])
    if "graph_allowlist" in raw:
        raw["graph_allowlist"] = tuple(raw["graph_allowlist"])
    return EncodeOptions(**raw)


def events_of(vector: dict[str, Any]) -> list[AgentEvent]:
    return [AgentEvent.model_validate(e) for e in vector["input"]]


def render_03(frame: StreamFrame | Task) -> dict[str, Any]:
    obj = frame if isinstance(frame, Task) else as_proto(frame)
    if isinstance(obj, Task):
        compat: Any = conversions.to_compat_task(obj)
    elif isinstance(obj, Message):
        compat = conversions.to_compat_message(obj)
    else:
        compat = conversions.to_compat_stream_response(to_stream_response(obj)).result
    return compat.model_dump(mode="json", by_alias=True, exclude_none=True)  # type: ignore[no-any-return]


def render_10(frame: StreamFrame) -> dict[str, Any]:
    response: StreamResponse = to_stream_response(as_proto(frame))
    rendered: dict[str, Any] = MessageToDict(response)
    return rendered


def _placeholder_regex(expected: str) -> re.Pattern[str]:
    pieces = re.split(r"(<[^<>]+>)", expected)
    pattern = "".join(
        (_TS if p == "<ts>" else ".+") if p.startswith("<") else re.escape(p) for p in pieces
    )
    return re.compile(pattern)


def normalise_expected(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: normalise_expected(v) for k, v in value.items()}
        if "parts" in out and out["parts"] is None:
            out["parts"] = []
        return out
    if isinstance(value, list):
        return [normalise_expected(v) for v in value]
    return value


def normalise_actual(actual: Any, expected: Any, *, proto3: bool = False) -> Any:
    """Apply the documented normalisations to ``actual``, guided by ``expected``."""
    if isinstance(actual, dict) and isinstance(expected, dict):
        out = dict(actual)
        if proto3:
            for key, value in expected.items():
                if key not in out and (value is False or value == []):
                    out[key] = value
        if out.get("append") is False and "append" not in expected:
            del out["append"]
        artifact = out.get("artifact")
        exp_artifact = expected.get("artifact")
        if (
            isinstance(artifact, dict)
            and isinstance(exp_artifact, dict)
            and "metadata" not in exp_artifact
            and artifact.get("metadata") == out.get("metadata")
        ):
            out["artifact"] = {k: v for k, v in artifact.items() if k != "metadata"}
        return {k: normalise_actual(v, expected.get(k), proto3=proto3) for k, v in out.items()}
    if isinstance(actual, list) and isinstance(expected, list):
        return [
            normalise_actual(a, expected[i] if i < len(expected) else None, proto3=proto3)
            for i, a in enumerate(actual)
        ]
    return actual


def assert_matches(actual: Any, expected: Any, path: str = "$") -> None:
    if isinstance(expected, str) and "<" in expected:
        assert isinstance(actual, str), f"{path}: {actual!r} is not a string"
        assert _placeholder_regex(expected).fullmatch(actual), f"{path}: {actual!r} ≠ {expected!r}"
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: {actual!r} is not an object"
        assert set(actual) == set(expected), f"{path}: keys {sorted(actual)} ≠ {sorted(expected)}"
        for key in expected:
            assert_matches(actual[key], expected[key], f"{path}.{key}")
        return
    if isinstance(expected, list):
        assert isinstance(actual, list), f"{path}: {actual!r} is not a list"
        assert len(actual) == len(expected), f"{path}: {len(actual)} items ≠ {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_matches(a, e, f"{path}[{i}]")
        return
    assert actual == expected and type(actual) is type(expected), (
        f"{path}: {actual!r} ≠ {expected!r}"
    )


def compare(actual: Any, expected: Any, *, proto3: bool = False) -> None:
    expected = normalise_expected(expected)
    assert_matches(normalise_actual(actual, expected, proto3=proto3), expected)


def deviation(vector: dict[str, Any], deviation_id: str) -> dict[str, Any] | None:
    return next((d for d in vector["deviations"] if d["id"] == deviation_id), None)


def strip_extra_parts(frames: list[dict[str, Any]], vector: dict[str, Any]) -> None:
    """The ``keep-text-with-tool-calls`` deviation: the bridge's extra leading TextParts
    must be exactly the declared ones; the rest must match trpc."""
    dev = deviation(vector, "keep-text-with-tool-calls")
    if dev is None:
        return
    extra = dev["bridge_extra_parts"]
    parts = frames[0]["artifact"]["parts"]
    assert parts[: len(extra)] == extra
    frames[0]["artifact"]["parts"] = parts[len(extra) :]


def strip_append_continuations(frames: list[dict[str, Any]], vector: dict[str, Any]) -> None:
    """The ``append-continuation`` deviation: a later chunk of an artifact already sent
    carries ``append: true`` (A2A's meaning; Go omits ``append``). Only chunks that
    really continue an artifact seen before may carry it."""
    if deviation(vector, "append-continuation") is None:
        return
    seen: set[str] = set()
    for frame in frames:
        artifact_id = frame.get("artifact", {}).get("artifactId")
        if frame.get("append") is True:
            assert artifact_id in seen, f"append on the first chunk of {artifact_id!r}"
            del frame["append"]
        if artifact_id:
            seen.add(artifact_id)


def strip_usage(frames: list[dict[str, Any]], vector: dict[str, Any]) -> None:
    """The ``usage-metadata`` deviation: the frames ``bridge_usage`` names carry exactly
    that ``usage`` in their metadata (and its copy on the artifact); no other frame has
    any. Then the key is taken out and the rest must match trpc."""
    dev = deviation(vector, "usage-metadata")
    declared = {entry["frame"]: entry["usage"] for entry in dev["bridge_usage"]} if dev else {}
    for index, frame in enumerate(frames):
        holders = [frame.get("metadata") or {}, frame.get("artifact", {}).get("metadata") or {}]
        for metadata in holders:
            usage = metadata.pop("usage", None)
            if index in declared:
                assert (
                    usage is not None and {k: int(n) for k, n in usage.items()} == (declared[index])
                ), (index, usage)
            else:
                assert usage is None, (index, usage)


def run_stream(vector: dict[str, Any]) -> list[StreamFrame]:
    encoder = StreamEncoder(RunTarget("task-1", "ctx-1", options_of(vector)))
    frames: list[RunFrame] = []
    for event in events_of(vector):
        frames.extend(encoder.encode(event))
    if vector.get("close"):
        frames.extend(encoder.close())
    return [as_proto(frame) for frame in frames]


@pytest.mark.parametrize("path", ENCODE_VECTORS, ids=[p.stem for p in ENCODE_VECTORS])
def test_vector(path: Path) -> None:
    vector = load(path)
    kind = vector["kind"]
    if kind == "stream":
        frames = run_stream(vector)
        v1 = vector.get("wire") == "1.0"
        rendered = [(render_10 if v1 else render_03)(f) for f in frames]
        strip_extra_parts(rendered, vector)
        strip_append_continuations(rendered, vector)
        strip_usage(rendered, vector)
        compare(rendered, vector["expect"], proto3=v1)
    elif kind == "submitted":
        encoder = StreamEncoder(RunTarget("task-1", "ctx-1", options_of(vector)))
        (frame,) = encoder.start(app_name=vector["app_name"], user_id=vector["user_id"])
        compare([render_03(frame)], vector["expect"])
    elif kind == "unary":
        unary = UnaryEncoder(RunTarget("task-1", "ctx-1", options_of(vector)))
        for event in events_of(vector):
            if not unary.add(event):
                break
        result = unary.result(context_id="ctx-1", task_id=unary_task_id("req-message-1"))
        compare(render_03(result), vector["expect"])
    elif kind == "v1_lifecycle":
        check_v1_lifecycle(vector)
    elif kind == "inbound":
        check_inbound(vector)
    elif kind == "card":
        check_card(vector)
    elif kind == "negotiation":
        check_negotiation(vector)
    else:  # pragma: no cover - a malformed vector file
        pytest.fail(f"unknown vector kind {kind}")


def check_v1_lifecycle(vector: dict[str, Any]) -> None:
    expect = vector["expect"]
    encoder = StreamEncoder(RunTarget("task-1", "ctx-1", options_of(vector)))
    (submitted,) = encoder.start(app_name=vector["app_name"], user_id=vector["user_id"])
    compare(render_10(submitted), expect["submitted"], proto3=True)
    (encoded,) = encoder.encode(events_of(vector)[0])
    update = as_proto(encoded)
    part = render_10(update)["artifactUpdate"]["artifact"]["parts"][0]
    compare(part, expect["function_call_part"], proto3=True)
    last_id = render_10(update)["artifactUpdate"]["artifact"]["artifactId"]
    final = final_artifact_update(task_id="task-1", context_id="ctx-1", last_artifact_id=last_id)
    compare(render_10(final), expect["final_chunk"], proto3=True)
    completed = encoder.close()[-1]
    compare(render_10(completed), expect["completed"], proto3=True)


def check_inbound(vector: dict[str, Any]) -> None:
    message = conversions.to_core_message(types_v03.Message.model_validate(vector["input"]))
    request = message_to_request(message)
    got = {
        "text": request.text,
        "content_parts": [{"type": p.type, "text": p.text} for p in request.content_parts],
    }
    dev = deviation(vector, "data-part-json")
    assert dev is not None
    assert got == dev["bridge_value"]
    assert got["text"] == vector["expect"]["text"]


def _dig(obj: Any, dotted: str) -> Any:
    for token in re.findall(r"[^.\[\]]+|\[\d+\]", dotted):
        obj = obj[int(token[1:-1])] if token.startswith("[") else obj[token]
    return obj


def check_card(vector: dict[str, Any]) -> None:
    agent = FunctionAgent(
        name=vector["input"]["name"], description=vector["input"]["description"], fn=_no_run
    )
    card = agent_card_to_dict(build_agent_card(agent, base_url="http://localhost:8080"))
    dev = deviation(vector, "sdk-card")
    assert dev is not None
    for key in dev["compared_keys"]:
        assert _dig(card, key) == _dig(vector["expect"], key), key


def _no_run(request: Any) -> Any:  # pragma: no cover - the card never runs the agent
    raise AssertionError("not called")


def check_negotiation(vector: dict[str, Any]) -> None:
    versions = vector["input"]
    dev = deviation(vector, "negotiation")
    assert dev is not None
    wanted = {"always": vector["expect"]["always"], **dev["bridge_value"]}
    for policy, expected in wanted.items():
        got = [
            select_encoding(policy, EncodingRequest(spec_version=v)).name == "trpc"
            for v in versions
        ]
        assert got == expected, policy
