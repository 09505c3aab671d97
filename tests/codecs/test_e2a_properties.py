"""Properties of the E2A codec: the §12.3 stream rules hold for whatever the sequencer and
the event encoder write and catch any break of them; records round-trip through JSON;
arbitrary input raises only :class:`E2AError`; a run encoded and decoded folds into the
same messages; secrets never reach a log line."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from acp.schema import SessionNotification
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from trpc_bridge.codecs.e2a import (
    E2AEnvelope,
    E2AError,
    E2AEventEncoder,
    E2AResponse,
    E2ARuleError,
    ResponseSequencer,
    StreamChecker,
    check_stream,
    e2a_response_to_a2a_stream_payload,
    e2a_response_to_acp_jsonrpc_response,
    e2a_response_to_acp_notification,
    e2a_response_to_agent_event,
    envelope_from_a2a_send_message,
    envelope_from_acp_jsonrpc,
    envelope_to_agent_request,
    log_line,
)
from trpc_bridge.events import AgentEvent
from trpc_bridge.message_aggregate import AggregatedMessage, aggregate

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
_ids = st.text("abcdef0123456789-", min_size=1, max_size=8)
_texts = st.text(min_size=1, max_size=12)

# --- writing: the sequencer cannot break the rules ------------------------------------

_chunk = st.tuples(st.sampled_from(["text", "reasoning", "tool", "custom"]), _texts)


@given(st.lists(_chunk, max_size=12), st.booleans())
def test_sequencer_writes_valid_streams(chunks: list[tuple[str, str]], fails: bool) -> None:
    seq = ResponseSequencer(request_id="q")
    out = [seq.chunk(kind, delta) for kind, delta in chunks]
    out.append(seq.error("boom", "failed") if fails else seq.complete({"content": ""}))
    check_stream(out)
    assert [r.sequence for r in out] == list(range(len(out)))
    with pytest.raises(E2ARuleError):
        seq.chunk("text", "late")


# --- reading: the checker catches every break -----------------------------------------


def _stream(request_id: str, length: int) -> list[E2AResponse]:
    seq = ResponseSequencer(request_id=request_id)
    return [seq.chunk("text", str(i)) for i in range(length)] + [seq.complete({})]


@st.composite
def interleaved(draw: st.DrawFn) -> list[E2AResponse]:
    """Valid streams of a few requests, merged in a random order that keeps each one's."""
    streams = [_stream(f"req-{i}", draw(st.integers(0, 4))) for i in range(draw(st.integers(1, 4)))]
    merged: list[E2AResponse] = []
    while any(streams):
        pick = draw(st.sampled_from([s for s in streams if s]))
        merged.append(pick.pop(0))
    return merged


@given(interleaved())
def test_interleaved_valid_streams_pass(responses: list[E2AResponse]) -> None:
    check_stream(responses)


@given(interleaved(), st.data())
def test_any_break_is_caught(responses: list[E2AResponse], data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(responses) - 1))
    target = responses[index]
    mutation = data.draw(
        st.sampled_from(["drop", "repeat", "renumber", "second_final", "unfinished"])
    )
    broken = list(responses)
    if mutation == "drop":
        # A gap, or (a final dropped) a request left open; a request's only record
        # dropped leaves nothing to notice.
        assume(sum(r.request_id == target.request_id for r in responses) > 1)
        del broken[index]
    elif mutation == "repeat":
        broken.insert(index + 1, target)
    elif mutation == "renumber":
        broken[index] = target.model_copy(
            update={"sequence": target.sequence + data.draw(st.integers(1, 3))}
        )
    elif mutation == "second_final":
        broken.insert(
            index + 1, target.model_copy(update={"is_final": True, "sequence": target.sequence + 1})
        )
        if not target.is_final:
            broken.append(target.model_copy(update={"is_final": True, "sequence": 10**6}))
    else:
        finals = [i for i, r in enumerate(broken) if r.is_final]
        broken[finals[0]] = broken[finals[0]].model_copy(update={"is_final": False})
    with pytest.raises(E2ARuleError):
        check_stream(broken)


def test_checker_reports_open_requests() -> None:
    checker = StreamChecker()
    for response in _stream("a", 2)[:2]:
        checker.check(response)
    assert checker.open_requests() == ["a"]


# --- JSON round trips -----------------------------------------------------------------

_opt = st.none() | _ids
envelopes = st.builds(
    E2AEnvelope,
    request_id=_opt,
    jsonrpc_id=st.none() | st.integers(-5, 5) | _ids,
    session_id=_opt,
    context_id=_opt,
    message_id=_opt,
    timestamp=st.none() | st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
    identity_origin=st.sampled_from(["system", "user", "agent", "service"]),
    channel=_opt,
    method=_opt,
    params=st.dictionaries(st.text(max_size=6), json_values, max_size=4),
    is_stream=st.booleans(),
    expected_output_modes=st.lists(st.text(max_size=5), max_size=2),
    channel_context=st.dictionaries(st.text(max_size=6), json_values, max_size=3),
    a2a_metadata=st.dictionaries(st.text(max_size=6), json_values, max_size=3),
    acp_meta=st.dictionaries(st.text(max_size=6), json_values, max_size=3),
)


@given(envelopes)
def test_envelope_round_trips(envelope: E2AEnvelope) -> None:
    again = E2AEnvelope.from_dict(json.loads(json.dumps(envelope.to_dict())))
    assert again == envelope


@given(st.lists(_chunk, max_size=6), _ids, st.none() | st.integers(0, 9))
def test_response_round_trips(
    chunks: list[tuple[str, str]], rid: str, jsonrpc_id: int | None
) -> None:
    seq = ResponseSequencer(E2AEnvelope(request_id=rid, jsonrpc_id=jsonrpc_id, session_id="s"))
    for response in [seq.chunk(k, d, message_id="m") for k, d in chunks] + [seq.complete({"x": 1})]:
        assert E2AResponse.from_dict(json.loads(json.dumps(response.to_dict()))) == response


# --- arbitrary input: typed errors only -------------------------------------------------

_keys = st.sampled_from(
    [
        "protocol_version",
        "request_id",
        "response_id",
        "sequence",
        "is_final",
        "status",
        "response_kind",
        "timestamp",
        "provenance",
        "body",
        "params",
        "payload",
        "metadata",
        "binding",
        "auth",
        "channel_id",
        "req_method",
        "jsonrpc",
        "id",
        "method",
        "message",
    ]
)
_records = st.dictionaries(_keys, json_values, max_size=10)


@given(_records | json_values)
@settings(max_examples=200)
def test_readers_raise_only_e2a_errors(data: Any) -> None:
    for read in (
        E2AEnvelope.from_dict,
        E2AResponse.from_dict,
        envelope_from_acp_jsonrpc,
        envelope_from_a2a_send_message,
    ):
        with contextlib.suppress(E2AError):
            read(data)


@given(
    st.dictionaries(
        st.sampled_from(["prompt", "content_blocks", "text", "files", "message"]), json_values
    )
)
def test_agent_request_raises_only_e2a_errors(params: dict[str, Any]) -> None:
    with contextlib.suppress(E2AError):
        envelope_to_agent_request(E2AEnvelope(params=params))


@given(
    st.sampled_from(
        sorted(
            {
                "e2a.chunk",
                "e2a.error",
                "acp.session_update",
                "acp.prompt_result",
                "a2a.stream_event",
                "a2a.task",
            }
        )
    ),
    json_values,
)
def test_projections_raise_only_e2a_errors(kind: str, body: Any) -> None:
    record = {
        "response_id": "r",
        "request_id": "q",
        "sequence": 0,
        "is_final": kind == "e2a.error",
        "status": "failed" if kind == "e2a.error" else "in_progress",
        "response_kind": kind,
        "timestamp": "2026-03-29T12:00:00+00:00",
        "session_id": "s",
        "body": body,
    }
    with contextlib.suppress(E2AError):
        response = E2AResponse.from_dict(record)
        e2a_response_to_acp_notification(response)
        e2a_response_to_acp_jsonrpc_response(response)
        e2a_response_to_a2a_stream_payload(response)
        e2a_response_to_agent_event(response)


# --- agent events ⇄ records -------------------------------------------------------------


@st.composite
def runs(draw: st.DrawFn) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    for n in range(draw(st.integers(0, 5))):
        step = draw(st.sampled_from(["text", "tool", "code", "state"]))
        rid = f"chatcmpl-{n}"
        if step == "text":
            thoughts = draw(st.lists(_texts, max_size=3))
            pieces = draw(st.lists(_texts, max_size=4))
            events += [AgentEvent.reasoning_delta(t, rid) for t in thoughts]
            events += [AgentEvent.text_delta(p, rid) for p in pieces]
            if draw(st.booleans()) or not (thoughts or pieces):
                events.append(
                    AgentEvent.final_text("".join(pieces) or "x", rid, reasoning="".join(thoughts))
                )
        elif step == "tool":
            args = draw(st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))
            events.append(AgentEvent.tool_call("fn", args, call_id=f"call-{n}", response_id=rid))
            events.append(AgentEvent.tool_result(f"call-{n}", "fn", draw(st.text(max_size=10))))
        elif step == "code":
            events += [
                AgentEvent.code(draw(_texts)),
                AgentEvent.code_result(draw(st.text(max_size=8))),
            ]
        else:
            events.append(AgentEvent.state({draw(_texts): draw(st.none() | st.binary(max_size=6))}))
    if draw(st.booleans()):
        events.append(AgentEvent.failure(draw(st.text(max_size=10)), type="api_error", code="E1"))
    return events


def _view(message: AggregatedMessage) -> Any:
    error = message.error
    return (
        message.id,
        message.role,
        message.text,
        message.reasoning,
        [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls],
        message.tool_results,
        message.code,
        message.code_results,
        None if error is None else (error.type, error.message, error.code, error.param),
    )


@given(runs())
@settings(max_examples=150)
def test_events_round_trip_through_e2a(events: list[AgentEvent]) -> None:
    encoder = E2AEventEncoder(
        ResponseSequencer(E2AEnvelope(request_id="q", session_id="s1", jsonrpc_id=1))
    )
    records = [r for e in events for r in encoder.encode(e)] + encoder.close()
    check_stream(records)
    decoded = [e for e in map(e2a_response_to_agent_event, records) if e is not None]
    assert [_view(m) for m in aggregate(decoded)] == [_view(m) for m in aggregate(events)]
    for record in records:  # every ACP projection is valid ACP
        notification = e2a_response_to_acp_notification(record)
        if notification is not None:
            SessionNotification.model_validate(notification["params"])
    assert e2a_response_to_acp_jsonrpc_response(records[-1]) is not None


# --- secrets ------------------------------------------------------------------------------

_SECRET = "s3cr3t-t0ken-value"


@given(
    json_values,
    st.sampled_from(["bearer_token", "Authorization", "x-api-key", "Cookie", "client_secret"]),
    st.integers(0, 3),
)
def test_secrets_never_reach_a_log_line(noise: Any, key: str, depth: int) -> None:
    nested: Any = {key: _SECRET}
    for level in range(depth):
        nested = {f"k{level}": [nested, noise]}
    envelope = E2AEnvelope(
        params={"p": nested},
        auth={"bearer_token": _SECRET, "extra_headers": {"Authorization": _SECRET}},
    )
    seq = ResponseSequencer(E2AEnvelope(request_id="q"))
    response = seq.chunk("custom", {"p": nested})
    for record in (envelope, response):
        assert _SECRET not in log_line(record)
    assert _SECRET not in repr(envelope.auth)
    assert _SECRET in json.dumps(envelope.to_dict())  # the wire form keeps it
