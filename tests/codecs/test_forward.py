"""The relay of a same-dialect proxy (``codecs/a2a/forward.py``) against the event path.

- It rewrites only ids: for any run the bridge encodes (generated events of every shape),
  the relayed frames written by the 0.3 door are the upstream's bytes with this task's
  ids (``ordered_json``: a frame that goes through protobuf has its Struct maps, such
  as a state delta, in the protobuf copy's order, as a2a-sdk writes them).
- Where both apply it is the event path: for every interop scenario and every golden
  stream vector, relaying the bridge's frames writes what decoding them to events and
  encoding those again writes (``ordered_json``: Struct maps in any order). Elsewhere the
  event path repairs what a Go v0 server drops (streamed text beside tool calls, a
  failure's response id) and the relay forwards the frames as they came.
- Thinking and error text are masked as the runner masks the events they stand for:
  with secrets split across thinking deltas, in complete responses and in failures, the
  masked relay writes what the masked event path writes.
- A client loses nothing: for every recorded stream of the decode vectors (Go's
  ``"parts": null``, no ``append``, no artifact metadata, statuses with messages), the
  relayed frames decode to the events the upstream's own frames decode to.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ordered_json import ordered_json
from test_text_delta import agent_events
from test_vectors_decode import DECODE_CASES
from test_vectors_encode import ENCODE_VECTORS, events_of, load, options_of

from trpc_bridge.agents.scenarios import SCRIPTS
from trpc_bridge.codecs.a2a.forward import Forwarder
from trpc_bridge.codecs.a2a.json03 import StreamWriter
from trpc_bridge.codecs.dialects.decode import DialectStreamDecoder
from trpc_bridge.codecs.encoding import EncodeOptions, RunFrame, RunTarget, as_proto
from trpc_bridge.codecs.errors import CodecError
from trpc_bridge.codecs.trpc.runs import StreamEncoder
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.redaction import OFF, EventRedactor, Redaction

UPSTREAM, PROXY, CONTEXT = "task-upstream", "task-proxy", "ctx-1"
_TIMESTAMP = re.compile(rb'"timestamp":"[^"]*"')
_MESSAGE_ID = re.compile(rb"msg-[0-9a-f-]{36}")


def _upstream(events: list[AgentEvent], options: EncodeOptions | None = None) -> list[bytes]:
    """The bridge's 0.3 stream of ``events`` (task ``UPSTREAM``): each frame's bytes."""
    encoder = StreamEncoder(RunTarget(UPSTREAM, CONTEXT, options or EncodeOptions()))
    frames: list[RunFrame] = [*encoder.start(app_name="a", user_id="u")]
    for event in events:
        frames += encoder.encode(event)
        if encoder.done:
            break
    frames += encoder.close()
    writer = StreamWriter("up-1")
    return [writer.response(frame) for frame in frames]


def _results(stream: list[bytes]) -> list[Any]:
    return [orjson.loads(data)["result"] for data in stream]


def _proxy() -> tuple[StreamEncoder, list[RunFrame]]:
    """The proxy's encoder and its own submitted status (published when it accepts)."""
    encoder = StreamEncoder(RunTarget(PROXY, CONTEXT, text_deltas=True))
    return encoder, [*encoder.start(app_name="a", user_id="u")]


def _event_path(results: list[Any], policy: Redaction = OFF) -> list[RunFrame]:
    """As the runner serves a remote agent's events: redacted, then encoded."""
    encoder, frames = _proxy()
    decoder = DialectStreamDecoder()
    redactor = EventRedactor(policy)
    for result in results:
        for event in decoder.feed(copy.deepcopy(result)):
            for shown in redactor.events(event):
                frames += encoder.encode(shown)
                if encoder.done:
                    return frames
    for shown in redactor.close():
        frames += encoder.encode(shown)
    return frames + encoder.close()


def _relayed(results: list[Any], policy: Redaction = OFF) -> list[RunFrame]:
    _, frames = _proxy()
    forwarder = Forwarder(PROXY, CONTEXT, policy)
    for result in results:
        frames += forwarder.frames(copy.deepcopy(result))
        if forwarder.ended:
            break
    return frames


def _written(frames: list[RunFrame]) -> list[bytes]:
    """The 0.3 door's bytes, timestamps and generated message ids set aside."""
    writer = StreamWriter("r-1")
    return [
        _MESSAGE_ID.sub(b"msg-X", _TIMESTAMP.sub(b'"timestamp":"T"', writer.response(frame)))
        for frame in frames
    ]


def _rewritten(stream: list[bytes]) -> list[bytes]:
    """The upstream's bytes as the relay should write them: this task's ids."""
    out = []
    for data in stream:
        data = data.replace(b'"id":"up-1"', b'"id":"r-1"', 1)
        data = data.replace(UPSTREAM.encode(), PROXY.encode())
        out.append(_MESSAGE_ID.sub(b"msg-X", _TIMESTAMP.sub(b'"timestamp":"T"', data)))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(agent_events, max_size=8), st.booleans())
def test_the_relay_rewrites_only_ids(events: list[AgentEvent], adk: bool) -> None:
    stream = _upstream(events, EncodeOptions(adk_compat=adk))
    # The proxy's own submitted status stands for the upstream's.
    expected = _written(_proxy()[1]) + _rewritten(stream)[1:]
    relayed = _written(_relayed(_results(stream)))
    assert [ordered_json(f) for f in relayed] == [ordered_json(f) for f in expected]


_SCENARIOS = sorted(SCRIPTS)
#: The relay applies to upstreams writing with the default options (as the proxy would).
#: S13 is a run whose completion has a state delta: the upstream puts it on its final
#: chunk, which the event path drops (trpc's v0 client does) and the relay keeps.
_STREAMS = [
    p
    for p in ENCODE_VECTORS
    if load(p).get("kind") == "stream"
    and options_of(load(p)) == EncodeOptions()
    and p.stem != "S13"
]


def _same_as_the_event_path(stream: list[bytes]) -> None:
    results = _results(stream)
    relayed, decoded = _written(_relayed(results)), _written(_event_path(results))
    assert [ordered_json(f) for f in relayed] == [ordered_json(f) for f in decoded]


@pytest.mark.parametrize("scenario", _SCENARIOS)
def test_every_scenario_relays_as_the_event_path_encodes(scenario: str) -> None:
    _same_as_the_event_path(_upstream(SCRIPTS[scenario](AgentRequest())))


@pytest.mark.parametrize("path", _STREAMS, ids=[p.stem for p in _STREAMS])
def test_every_stream_vector_relays_as_the_event_path_encodes(path: Any) -> None:
    vector = load(path)
    _same_as_the_event_path(_upstream(events_of(vector), options_of(vector)))


def _events(frames: list[RunFrame]) -> list[dict[str, Any]]:
    decoder = DialectStreamDecoder()
    writer = StreamWriter("r")
    out = []
    for frame in frames:
        for event in decoder.feed(orjson.loads(writer.response(frame))["result"]):
            dumped = event.model_dump(mode="json", exclude={"event_id", "timestamp"})
            out.append(dumped)
    return out


#: Streams on the 0.3 wire (the relay's): every frame has its ``kind``.
_RECORDED = [
    (case_id, vector["input"])
    for case_id, vector in DECODE_CASES
    if vector.get("mode") == "stream"
    and isinstance(vector.get("input"), list)
    and all("kind" in result for result in vector["input"])
]


@pytest.mark.parametrize("recorded", [r for _, r in _RECORDED], ids=[i for i, _ in _RECORDED])
def test_a_client_reads_the_relayed_stream_as_the_upstreams(recorded: list[Any]) -> None:
    """The recorded frames as they came (any server's) and as the relay writes them
    decode to the same events."""
    direct = DialectStreamDecoder()
    expected = [
        event.model_dump(mode="json", exclude={"event_id", "timestamp"})
        for result in copy.deepcopy(recorded)
        for event in direct.feed(result)
    ]
    forwarder = Forwarder(PROXY, CONTEXT)
    frames: list[RunFrame] = []
    for result in copy.deepcopy(recorded):
        frames += forwarder.frames(result)
    assert _events(frames) == expected


def test_go_frames_keep_what_go_wrote() -> None:
    """``"parts": null`` is an empty list, a missing ``append`` false, and no artifact
    metadata is added; a text delta is one of the proxy's runs."""
    go = {
        "artifact": {"artifactId": "chatcmpl-1", "parts": [{"kind": "text", "text": "Hi"}]},
        "contextId": "ctx-up",
        "kind": "artifact-update",
        "lastChunk": False,
        "metadata": {"llm_response_id": "chatcmpl-1", "object_type": "chat.completion.chunk"},
        "taskId": UPSTREAM,
    }
    empty = {**go, "artifact": {"artifactId": "", "parts": None}, "metadata": {"k": "v"}}
    forwarder = Forwarder(PROXY, CONTEXT)
    (delta,) = forwarder.frames(copy.deepcopy(go))
    (metadata_only,) = forwarder.frames(copy.deepcopy(empty))
    written = [json.loads(f) for f in _written([delta, metadata_only])]
    assert written[0]["result"] == {
        **go,
        "append": False,
        "contextId": CONTEXT,
        "taskId": PROXY,
    }
    assert written[1]["result"]["artifact"] == {"artifactId": "", "parts": []}
    assert forwarder.upstream_task_id == UPSTREAM and not forwarder.ended
    assert as_proto(delta).artifact.parts[0].text == "Hi"


def test_an_ending_status_ends_the_relay_and_a_stranger_frame_is_refused() -> None:
    forwarder = Forwarder(PROXY, CONTEXT)
    status = {"kind": "status-update", "taskId": "t", "contextId": "c", "final": False}
    assert forwarder.frames({**status, "status": {"state": "submitted"}}) == []
    (working,) = forwarder.frames({**status, "status": {"state": "working"}})
    assert as_proto(working).task_id == PROXY and not forwarder.ended
    forwarder.frames({**status, "status": {"state": "input-required"}})
    assert forwarder.ended and forwarder.state == "input-required"
    with pytest.raises(CodecError):
        forwarder.frames({"kind": "surprise"})
    with pytest.raises(CodecError):
        forwarder.frames({"kind": "artifact-update", "artifact": {"parts": [{"kind": 3}]}})


_SECRET = "sk-" + "a1B2c3D4e5F6g7H8i9J0"
#: Pieces that join into text with the secret whole, or split across deltas ("sk-" then
#: the rest): after a space, where the patterns look for one.
_pieces = st.lists(st.sampled_from(["think ", _SECRET + " ", "sk-", _SECRET[3:] + " "]), max_size=4)


@st.composite
def _secret_runs(draw: st.DrawFn) -> list[AgentEvent]:
    """Thinking with secrets, split anywhere, beside answer text; a complete response;
    maybe a failure that names a secret."""
    events: list[AgentEvent] = []
    for response in ("r1", "r2")[: draw(st.integers(1, 2))]:
        thinking = "".join(draw(_pieces))
        cuts = sorted(draw(st.lists(st.integers(0, len(thinking)), max_size=4)))
        for start, end in zip([0, *cuts], [*cuts, len(thinking)], strict=True):
            if thinking[start:end]:
                events.append(AgentEvent.reasoning_delta(thinking[start:end], response))
        events.append(AgentEvent.text_delta("answer", response))
        # The complete response carries its whole thinking, as trpc's models send it
        # (without it the event path restores it from the pieces: a repair, §4.4).
        events.append(AgentEvent.final_text("answer", response, reasoning=thinking, done=False))
    if draw(st.booleans()):
        events.append(AgentEvent.failure(f"boom {_SECRET}", response_id="r9"))
    return events


@settings(max_examples=200, deadline=None)
@given(_secret_runs())
def test_the_relay_masks_as_the_runner_masks(events: list[AgentEvent]) -> None:
    policy = Redaction()
    results = _results(_upstream(events))
    relayed = _written(_relayed(results, policy))
    decoded = _written(_event_path(results, policy))
    assert [ordered_json(f) for f in relayed] == [ordered_json(f) for f in decoded]
    leaked = [frame for frame in relayed if _SECRET.encode() in frame]
    assert not leaked, leaked
