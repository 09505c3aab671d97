"""Properties of the trpc decode codec: on any JSON it either decodes or raises
:class:`CodecError`, never anything else; what the encoder writes decodes to events that
say the same."""

from __future__ import annotations

import contextlib
from typing import Any

from a2a.compat.v0_3 import conversions
from a2a.types import StreamResponse
from hypothesis import given, settings
from hypothesis import strategies as st

from trpc_bridge.codecs.encoding import EncodeOptions
from trpc_bridge.codecs.errors import CodecError
from trpc_bridge.codecs.trpc.decode import StreamDecoder, decode_result
from trpc_bridge.codecs.trpc.encode import encode_event
from trpc_bridge.codecs.trpc.stream_frames import artifact_update, error_status
from trpc_bridge.events import AgentEvent, Usage
from trpc_bridge.message_aggregate import aggregate

_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
json_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def _either(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A plausible value, or any JSON at all in its place."""
    return value | json_values


_metadata = st.dictionaries(
    st.sampled_from(
        [
            "type",
            "adk_type",
            "thought",
            "adk_thought",
            "object_type",
            "llm_response_id",
            "tag",
            "state_delta",
            "usage",
            "task_state",
            "error_type",
            "error_message",
            "error_code",
            "content_type",
            "data_part_compat",
        ]
    ),
    _either(
        st.sampled_from(
            [
                "function_call",
                "function_response",
                "executable_code",
                "code_execution_result",
                "chat.completion",
                "chat.completion.chunk",
                "error",
                "failed",
                "image",
            ]
        )
        | st.booleans()
    ),
    max_size=4,
)
_data = _either(
    st.fixed_dictionaries(
        {},
        optional={
            "id": _either(st.text(max_size=4)),
            "name": _either(st.text(max_size=4)),
            "args": json_values,
            "response": json_values,
            "code": json_values,
            "output": json_values,
            "value": json_values,
        },
    )
)
_part = _either(
    st.fixed_dictionaries(
        {},
        optional={
            "kind": _either(st.sampled_from(["text", "data", "file", "video"])),
            "text": _either(st.text(max_size=6)),
            "data": _data,
            "file": _either(
                st.fixed_dictionaries({}, optional={"bytes": json_values, "uri": json_values})
            ),
            "raw": json_values,
            "url": json_values,
            "metadata": _either(_metadata),
        },
    )
)
_parts = _either(st.lists(_part, max_size=4))
_message = st.fixed_dictionaries(
    {"kind": st.just("message")},
    optional={
        "messageId": json_values,
        "role": json_values,
        "parts": _parts,
        "metadata": _either(_metadata),
    },
)
_status = st.fixed_dictionaries(
    {"state": _either(st.sampled_from(["working", "failed", "TASK_STATE_CANCELED", "completed"]))},
    optional={"message": _either(_message)},
)
_results = st.one_of(
    json_values,
    _message,
    st.fixed_dictionaries(
        {"kind": st.just("status-update"), "status": _either(_status)},
        optional={"metadata": _either(_metadata), "taskId": json_values},
    ),
    st.fixed_dictionaries(
        {"kind": st.just("artifact-update")},
        optional={
            "artifact": _either(
                st.fixed_dictionaries({"artifactId": json_values, "parts": _parts})
            ),
            "metadata": _either(_metadata),
            "lastChunk": json_values,
        },
    ),
    st.fixed_dictionaries(
        {"kind": st.just("task"), "status": _either(_status)},
        optional={
            "id": json_values,
            "history": _either(st.lists(_message, max_size=3)),
            "artifacts": _either(
                st.lists(
                    st.fixed_dictionaries({"artifactId": json_values, "parts": _parts}), max_size=3
                )
            ),
            "metadata": _either(_metadata),
        },
    ),
).flatmap(
    # …and each of them also in a 1.0 wrapper.
    lambda r: st.sampled_from([r, {"statusUpdate": r}, {"artifactUpdate": r}, {"task": r}])
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_results, min_size=1, max_size=5))
def test_stream_decoding_raises_nothing_but_codec_error(results: list[Any]) -> None:
    decoder = StreamDecoder()
    for result in results:
        with contextlib.suppress(CodecError):
            decoder.feed(result)


@settings(max_examples=400, deadline=None)
@given(_results)
def test_unary_decoding_raises_nothing_but_codec_error(result: Any) -> None:
    try:
        events = decode_result(result)
    except CodecError:
        return
    assert not events or events[-1].done


# --- round trip: agent events → trpc encoder → A2A (1.0 and 0.3 JSON) → decoder ---------

_texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=12)
# Placeholder: an LLM response id names one response, so `_runs` renames them per segment.
_ids = st.just("chatcmpl-x")
_tool_call = st.builds(
    lambda name, args, call_id, rid: AgentEvent.tool_call(
        name, args, call_id=call_id, response_id=rid
    ),
    st.text(alphabet="abcxyz_", min_size=1, max_size=6),
    st.dictionaries(st.text(max_size=4), st.integers() | _texts, max_size=3),
    st.text(alphabet="0123456789", min_size=1, max_size=4),
    _ids,
)


@st.composite
def _answer(draw: st.DrawFn) -> list[AgentEvent]:
    """Streamed reasoning/text deltas, then maybe the complete text or a tool call (whose
    text the server drops from that frame) under the same id."""
    response_id = draw(_ids)
    events = [
        AgentEvent.reasoning_delta(p, response_id)
        if thought
        else AgentEvent.text_delta(p, response_id)
        for thought, p in draw(st.lists(st.tuples(st.booleans(), _texts), max_size=4))
    ]
    ending = draw(st.sampled_from(["none", "final", "tool_call"]))
    if ending == "final":
        streamed = "".join(e.choices[0].delta.content for e in events)
        final = draw(st.sampled_from([streamed, draw(_texts)]))
        events.append(AgentEvent.final_text(final, response_id))
    elif ending == "tool_call":
        call = draw(_tool_call)
        call.id = response_id
        events.append(call)
    return events


_segment = st.one_of(
    _answer(),
    _tool_call.map(lambda event: [event]),
    st.builds(lambda cid, content: [AgentEvent.tool_result(cid, "tool", content)], _texts, _texts),
    st.builds(lambda code: [AgentEvent.code(code)], _texts.filter(bool)),
    st.builds(lambda output: [AgentEvent.code_result(output)], _texts.filter(bool)),
)
_failure = st.builds(
    lambda message, code, rid: [AgentEvent.failure(message, code=code, response_id=rid)],
    _texts,
    st.none() | st.text(alphabet="ABC_1", min_size=1, max_size=5),
    _ids,
)


def _numbered(segments: list[list[AgentEvent]]) -> list[AgentEvent]:
    for number, segment in enumerate(segments):
        for event in segment:
            if event.id:
                event.id = f"chatcmpl-{number}"
    return [event for segment in segments for event in segment]


_runs = st.tuples(st.lists(_segment, max_size=5), st.lists(_failure, max_size=1)).map(
    lambda t: _numbered([*t[0], *t[1]])
)


def _wire(event: AgentEvent) -> StreamResponse | None:
    """The streaming frame trpc's server (here: the bridge encoder) sends for ``event``."""
    if event.is_terminal_error():
        return StreamResponse(status_update=error_status(event, task_id="t", context_id="c"))
    encoded = encode_event(event, EncodeOptions(), streaming=True)
    if encoded is None:
        return None
    return StreamResponse(artifact_update=artifact_update(encoded, task_id="t", context_id="c"))


def _v03(response: StreamResponse) -> dict[str, Any]:
    dumped: dict[str, Any] = conversions.to_compat_stream_response(
        response, "r1"
    ).result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def _said(events: list[AgentEvent]) -> list[tuple[Any, ...]]:
    """Folded content per message; id-less messages (tool results, code) by content only."""
    return [
        (m.id, m.text, m.reasoning, m.tool_calls, m.tool_results, m.code, m.code_results, m.error)
        for m in aggregate(events)
    ]


@settings(max_examples=200, deadline=None)
@given(_runs, st.booleans())
def test_encode_then_decode_says_the_same(events: list[AgentEvent], as_v03: bool) -> None:
    decoder = StreamDecoder()
    decoded: list[AgentEvent] = []
    for event in events:
        frame = _wire(event)
        if frame is not None:
            decoded.extend(decoder.feed(_v03(frame)) if as_v03 else decoder.feed_proto(frame))
    assert _said(decoded) == _said(events)


_counts = st.integers(min_value=0, max_value=2**53)
_usage = st.builds(Usage, prompt_tokens=_counts, completion_tokens=_counts, total_tokens=_counts)


@settings(max_examples=200, deadline=None)
@given(_runs, st.data(), st.booleans())
def test_usage_travels_with_the_events_that_are_written(
    events: list[AgentEvent], data: st.DataObject, as_v03: bool
) -> None:
    """Usage on any complete (non-error) event arrives on the event decoded from its frame,
    exactly (counts up to 2**53 survive 1.0's doubles); nothing else gains any."""
    for event in events:
        if not event.is_partial and not event.is_terminal_error():
            event.usage = data.draw(st.none() | _usage)
    decoder = StreamDecoder()
    sent: list[tuple[str, Usage]] = []
    received: list[tuple[str, Usage]] = []
    for event in events:
        frame = _wire(event)
        if frame is None:
            continue
        if event.usage is not None:
            sent.append((event.id, event.usage))
        for got in decoder.feed(_v03(frame)) if as_v03 else decoder.feed_proto(frame):
            if got.usage is not None:
                received.append((got.id, got.usage))
    assert received == sent
