"""Properties of the tfrs codec: the merge does not depend on arrival order or repeats;
reading never raises; the size rules lose nothing they do not announce; what the
producer writes reads back as itself with ``seq`` rising and every tool call closed."""

from __future__ import annotations

import json
from typing import Any

from google.protobuf.json_format import MessageToDict
from hypothesis import given, settings
from hypothesis import strategies as st

from trpc_bridge.codecs.tfrs import (
    METADATA_KEY,
    Envelope,
    ProgressConsumer,
    ProgressEvents,
    ProgressItem,
    ProgressMerger,
    ProgressProducer,
    read_envelope,
    split_text,
    working_update,
)
from trpc_bridge.codecs.tfrs.limits import Dropped, utf8_size
from trpc_bridge.events import AgentEvent, ResponseError

_words = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)


@st.composite
def block_sequences(draw: st.DrawFn) -> list[Envelope]:
    """A valid turn: ``seq`` rising from any start with gaps, tool streams that start
    running and may end done / aborted, thinking and text in the default stream."""
    seq = draw(st.integers(-5, 100))
    blocks: list[Envelope] = []
    open_tools: list[str] = []
    for step in range(draw(st.integers(0, 25))):
        seq += draw(st.integers(1, 3))
        choice = draw(st.sampled_from(["thinking", "text", "error", "call", "chunk", "end"]))
        if choice in ("thinking", "text"):
            blocks.append(Envelope(kind=choice, seq=seq, payload={"text": draw(_words)}))
        elif choice == "error":
            blocks.append(Envelope(kind="error", seq=seq, payload={"message": draw(_words)}))
        elif choice == "call" or not open_tools:
            key = f"call-{step}"
            open_tools.append(key)
            payload = {"tool": draw(st.sampled_from(["a", "b"])), "tool_call_id": key}
            blocks.append(Envelope(kind="tool_call", stream_key=key, seq=seq, payload=payload))
        else:
            key = draw(st.sampled_from(open_tools))
            payload = {"tool": "a", "chunk": draw(_words)}
            if choice == "chunk":
                blocks.append(
                    Envelope(kind="tool_output_append", stream_key=key, seq=seq, payload=payload)
                )
            else:
                open_tools.remove(key)
                status = draw(st.sampled_from(["done", "aborted"]))
                blocks.append(
                    Envelope(
                        kind="tool_call",
                        stream_key=key,
                        seq=seq,
                        status=status,
                        payload={"tool": "a"},
                    )
                )
    return blocks


@st.composite
def arrivals(draw: st.DrawFn) -> tuple[list[Envelope], list[Envelope]]:
    """A valid sequence and one arrival of it: permuted, each block one to three times."""
    blocks = draw(block_sequences())
    copies = [b for b in blocks for _ in range(draw(st.integers(1, 3)))]
    return blocks, draw(st.permutations(copies))


def _merged(blocks: list[Envelope]) -> tuple[Any, ...]:
    merger = ProgressMerger()
    accepted = [b.key for b in blocks if merger.add(ProgressItem(b, b.text))]
    assert len(accepted) == len(set(accepted))  # each (streamKey, seq) taken once
    return (merger.blocks, merger.streams(), sorted(accepted))


@settings(max_examples=300, deadline=None)
@given(arrivals())
def test_any_permutation_with_duplicates_merges_to_the_same_result(
    case: tuple[list[Envelope], list[Envelope]],
) -> None:
    blocks, arrived = case
    assert _merged(arrived) == _merged(blocks)


@settings(max_examples=200, deadline=None)
@given(arrivals())
def test_events_from_any_arrival_have_one_call_and_at_most_one_result_per_tool(
    case: tuple[list[Envelope], list[Envelope]],
) -> None:
    blocks, arrived = case
    merger, mapper = ProgressMerger(), ProgressEvents()
    events = [
        e
        for b in arrived
        if merger.add(item := ProgressItem(b, b.text))
        for e in mapper.events(item)
    ]
    calls = [c.id for e in events for c in e.choices[0].message.tool_calls]
    results = [e.choices[0].message.tool_id for e in events if e.object == "tool.response"]
    tool_keys = {b.stream_key for b in blocks if b.stream_key}
    ended = {b.stream_key for b in blocks if b.stream_key and b.status != "running"}
    assert sorted(calls) == sorted(tool_keys)
    assert sorted(results) == sorted(ended)
    for key in results:  # a result never comes before its call
        assert calls.index(key) < [e.choices[0].message.tool_id for e in events].index(key)
    assert all(not e.is_terminal_error() for e in events)


_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=20,
)
_envelope_like = st.fixed_dictionaries(
    {},
    optional={
        "v": st.sampled_from([1, 1.0, 2, "1", None]) | _json,
        "kind": st.sampled_from(["thinking", "tool_call", "text", "error", "x"]) | _json,
        "streamKey": st.text(max_size=4) | _json,
        "seq": st.integers() | _json,
        "status": st.sampled_from(["running", "done", "aborted", "?"]) | _json,
        "payload": st.fixed_dictionaries(
            {}, optional={k: _json | _words for k in ("text", "tool", "chunk", "message")}
        )
        | _json,
    },
)


@settings(max_examples=200, deadline=None)
@given(_words, _envelope_like | _json, st.booleans())
def test_reading_never_raises(text: str, raw: Any, as_string: bool) -> None:
    value = json.dumps(raw) if as_string else raw
    envelope, problem = read_envelope(text, {METADATA_KEY: value})
    if envelope.pseudo:
        assert problem and envelope.kind == "text" and envelope.payload == {"text": text}
    else:
        assert problem == "" and envelope.v == 1 and isinstance(envelope.seq, int)
        assert ProgressConsumer().feed_items([ProgressItem(envelope, text)])


_lines = st.lists(
    st.tuples(st.sampled_from("aé中"), st.integers(0, 40), st.sampled_from(["\n", "\r\n", ""])),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(_lines, st.integers(4, 30), st.integers(0, 40))
def test_split_keeps_every_byte_it_does_not_announce(
    spec: list[tuple[str, int, str]], soft: int, extra: int
) -> None:
    text = "".join(unit * count + end for unit, count, end in spec)
    hard = soft + extra
    pieces = split_text(text, soft=soft, hard=hard)
    kept = [p for p in pieces if isinstance(p, str)]
    dropped = [p.size for p in pieces if isinstance(p, Dropped)]
    assert utf8_size("".join(kept)) + sum(dropped) == utf8_size(text)
    if not dropped:
        assert "".join(kept) == text
    for piece in kept:
        assert utf8_size(piece) <= soft or (
            utf8_size(piece) <= hard and len(piece.splitlines()) == 1
        )
    assert all(size > hard for size in dropped)


def _event(draw: st.DrawFn, index: int) -> AgentEvent:
    rid = f"r{draw(st.integers(0, 3))}"
    kind = draw(st.sampled_from(["reason", "text", "final", "call", "result", "error"]))
    if kind == "reason":
        return AgentEvent.reasoning_delta(draw(_words), rid)
    if kind == "text":
        return AgentEvent.text_delta(draw(_words), rid)
    if kind == "final":
        return AgentEvent.final_text(draw(_words), rid, reasoning=draw(_words), done=False)
    call_id = draw(st.sampled_from(["", "c1", "c2", f"c{index}"]))
    tool = draw(st.sampled_from(["a", "b"]))
    if kind == "call":
        return AgentEvent.tool_call(tool, {}, call_id=call_id, response_id=rid)
    if kind == "result":
        return AgentEvent.tool_result(call_id, tool, draw(_words))
    return (
        AgentEvent.failure(draw(_words))
        if draw(st.booleans())
        else AgentEvent(id=rid, error=ResponseError(message=draw(_words)))
    )


@st.composite
def agent_runs(draw: st.DrawFn) -> list[AgentEvent]:
    return [_event(draw, i) for i in range(draw(st.integers(0, 20)))]


@settings(max_examples=200, deadline=None)
@given(agent_runs(), st.integers(-3, 50), st.booleans(), st.booleans())
def test_what_the_producer_writes_reads_back_with_rising_seq_and_closed_tools(
    events: list[AgentEvent], start: int, tool_output: bool, aborted: bool
) -> None:
    producer = ProgressProducer(seq_start=start, tool_output=tool_output)
    updates = [u for e in events for u in producer.updates(e)]
    updates += producer.abort() if aborted else producer.close()
    consumer = ProgressConsumer()
    sent = [u.envelope for u in updates if u.envelope is not None]
    for update in updates:
        wire = MessageToDict(working_update(update, task_id="t", context_id="c"))
        consumer.feed({"statusUpdate": wire})
    seqs = [e.key[1] for e in sent]
    assert seqs == sorted(set(seqs)) and (not seqs or seqs[0] == start)
    assert consumer.merger("t").blocks == sent
    for view in consumer.merger("t").streams().values():
        if view.key:  # every tool stream ends done or aborted
            assert view.status in ("done", "aborted")
