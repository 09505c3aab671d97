"""Folding event streams into complete messages keyed by llm_response_id."""

from __future__ import annotations

import json

from vector_files import VECTORS

from trpc_bridge.codecs.trpc.decode import decode_stream
from trpc_bridge.events import AgentEvent, FunctionCall, ToolCall
from trpc_bridge.message_aggregate import MessageAggregator, aggregate


def test_go_v0_run_folds_without_duplicating_the_final_text() -> None:
    frames = json.loads((VECTORS / "C12.json").read_text())["input"]
    aggregator = MessageAggregator()
    shown = ""
    for event in decode_stream(frames):
        update = aggregator.add(event)
        assert not update.text_replaced
        shown += update.text
    x, result, y = aggregator.messages
    assert (x.id, x.text, [c.function.name for c in x.tool_calls]) == (
        "X",
        "Let me",
        ["get_weather"],
    )
    assert x.tool_calls[0].function.arguments == '{"city":"Beijing"}'
    assert result.tool_results[0].content == '{"temp":"20°C"}'
    assert (y.id, y.text, y.complete) == ("Y", "It is 20°C.", True)
    assert shown == "Let meIt is 20°C."
    assert aggregator.text == "Let meIt is 20°C."


def test_reasoning_code_and_errors_are_kept_apart() -> None:
    events = [
        AgentEvent.reasoning_delta("hmm", "r1"),
        AgentEvent.text_delta("Hi", "r1"),
        AgentEvent.final_text("Hi there", "r1", reasoning="hmm"),
        AgentEvent.code("print(1)"),
        AgentEvent.code_result("1\n"),
        AgentEvent.failure("boom", code="E1"),
    ]
    aggregator = MessageAggregator()
    updates = [aggregator.add(e) for e in events]
    r1, code, output, failure = aggregator.messages
    assert (r1.text, r1.reasoning) == ("Hi there", "hmm")
    assert updates[2].text == " there" and updates[2].reasoning == ""
    assert code.code == ["print(1)"] and output.code_results == ["1\n"]
    assert code.text == output.text == ""
    assert failure.error is not None and aggregator.error == failure.error


def test_a_complete_text_that_differs_from_its_deltas_replaces_them() -> None:
    aggregator = MessageAggregator()
    aggregator.add(AgentEvent.text_delta("draft", "r"))
    update = aggregator.add(AgentEvent.final_text("final", "r"))
    assert update.text_replaced and update.text == "final"
    assert aggregator.text == "final"


def test_streamed_tool_call_pieces_join_by_call_id() -> None:
    piece = AgentEvent.tool_call("f", '{"a":', call_id="c1", response_id="r")
    rest = AgentEvent.tool_call("", "1}", call_id="c1", response_id="r")
    for event in (piece, rest):  # as partial deltas, the way trpc's v1 server streams them
        event.is_partial = True
        event.choices[0].delta, event.choices[0].message = (
            event.choices[0].message,
            event.choices[0].delta,
        )
    (message,) = aggregate([piece, rest])
    assert message.tool_calls == [
        ToolCall(id="c1", function=FunctionCall(name="f", arguments='{"a":1}'))
    ]
