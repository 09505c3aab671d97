"""AG-UI translator: golden vectors (AG-01 from the spec plus the bridge's own) and a
property test over arbitrary agent event sequences."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import BaseEvent, RunAgentInput
from agui_checks import check_sequence, counting_ids
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_files import VECTORS

from trpc_bridge.codecs.agui.request import request_from_run_input
from trpc_bridge.codecs.agui.translator import AguiTranslator, state_value
from trpc_bridge.events import AgentEvent, FunctionCall, ObjectType, ToolCall

AG_VECTORS = sorted(VECTORS.glob("AG*.json"))


def wire(events: list[BaseEvent]) -> list[dict[str, Any]]:
    return [json.loads(e.model_dump_json(by_alias=True)) for e in events]


def translate(
    events: list[AgentEvent], end: str = "finish", state_keys: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    translator = AguiTranslator("thread-1", "run-1", new_id=counting_ids(), state_keys=state_keys)
    out: list[BaseEvent] = []
    for event in events:
        out += translator.translate(event)
    if end == "finish":
        out += translator.finish()
    elif end == "cancel":
        out += translator.cancel()
    return wire(out)


@pytest.mark.parametrize("path", AG_VECTORS, ids=[p.stem for p in AG_VECTORS])
def test_vector(path: Path) -> None:
    vector = json.loads(path.read_text())
    events = [AgentEvent.model_validate(e) for e in vector["input"]]
    got = translate(events, vector.get("end", "finish"), tuple(vector.get("state_keys", ())))
    assert got == vector["expect"]
    check_sequence(got)


def test_ag01_matches_the_spec_types_and_ids() -> None:
    """AG-01 as written in the spec (§8.5), ids compared except the result's message id."""
    vector = json.loads((VECTORS / "AG01.json").read_text())
    spec_types = [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    got = translate([AgentEvent.model_validate(e) for e in vector["input"]])
    assert [e["type"] for e in got] == spec_types
    ids = [e.get("messageId") or e.get("toolCallId") for e in got[1:-1]]
    result_id = got[7]["messageId"]
    assert ids == ["X", "X", "X", *["call_001"] * 3, result_id, *["Y"] * 4]
    assert got[4]["parentMessageId"] == "X"


def test_every_method_is_idempotent_after_the_end() -> None:
    translator = AguiTranslator("t", "r")
    assert [e.type for e in translator.translate(AgentEvent.text_delta("hi", "A"))] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
    ]
    assert [e.type for e in translator.fail("boom")] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert translator.ended
    assert translator.finish() == []
    assert translator.cancel() == []
    assert translator.translate(AgentEvent.text_delta("more", "A")) == []


def test_an_empty_run_still_starts_and_finishes() -> None:
    assert [e.type for e in AguiTranslator("t", "r").finish()] == ["RUN_STARTED", "RUN_FINISHED"]


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (b"3", 3),
        (b'"s"', "s"),
        (b"null", None),
        (b"not json", "not json"),
        (b"Infinity", "Infinity"),
        (b"\xff", "/w=="),
    ],
)
def test_state_values(raw: bytes, value: Any) -> None:
    assert state_value(raw) == value


# --- request side ----------------------------------------------------------------------


def test_request_from_run_input_takes_the_last_user_message() -> None:
    run_input = RunAgentInput.model_validate(
        {
            "threadId": "th",
            "runId": "ru",
            "messages": [
                {"id": "u1", "role": "user", "content": "first"},
                {"id": "a1", "role": "assistant", "content": "answer"},
                {
                    "id": "u2",
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look "},
                        {"type": "image", "source": {"type": "url", "value": "http://x/i.png"}},
                        {"type": "text", "text": "here"},
                        {
                            "type": "document",
                            "source": {"type": "data", "value": "aGk=", "mimeType": "text/plain"},
                        },
                    ],
                },
                {"id": "t1", "role": "tool", "content": "r", "toolCallId": "c"},
            ],
        }
    )
    request = request_from_run_input(run_input, user_id="alice")
    assert request.text == "look here"
    assert request.context_id == "th"
    assert request.invocation_id == "ru"
    assert request.user_id == "alice"
    assert request.message_id == "u2"
    assert [(p.type, p.url, p.data) for p in request.content_parts] == [
        ("image", "http://x/i.png", None),
        ("file", "", b"hi"),
    ]


def test_request_without_user_message_is_empty() -> None:
    run_input = RunAgentInput(thread_id="th", run_id="ru", messages=[])
    assert request_from_run_input(run_input).text == ""


# --- property --------------------------------------------------------------------------

RESPONSE_IDS = st.sampled_from(["A", "B", ""])
TEXT = st.text(alphabet="ab ", min_size=0, max_size=4)
CALL_IDS = st.sampled_from(["c1", "c2", ""])


def _calls(ids: list[str]) -> list[ToolCall]:
    return [ToolCall(id=i, function=FunctionCall(name="f", arguments="{}")) for i in ids]


EVENTS = st.one_of(
    st.builds(AgentEvent.text_delta, TEXT, RESPONSE_IDS),
    st.builds(AgentEvent.reasoning_delta, TEXT, RESPONSE_IDS),
    st.builds(
        lambda text, rid, reasoning: AgentEvent.final_text(text, rid, reasoning=reasoning),
        TEXT,
        RESPONSE_IDS,
        TEXT,
    ),
    st.builds(
        lambda ids, rid: AgentEvent.tool_calls(_calls(ids), rid),
        st.lists(CALL_IDS, min_size=1, max_size=3),
        RESPONSE_IDS,
    ),
    st.builds(lambda cid, text: AgentEvent.tool_result(cid, "f", text), CALL_IDS, TEXT),
    st.builds(lambda text: AgentEvent.code(text), TEXT),
    st.builds(lambda text: AgentEvent.code_result(text), TEXT),
    st.builds(
        lambda delta: AgentEvent.state(delta),
        st.dictionaries(st.sampled_from(["k", "a/b", "~"]), st.one_of(st.none(), st.binary())),
    ),
    st.builds(lambda m: AgentEvent.failure(m), TEXT),
    st.just(AgentEvent(object=ObjectType.RUNNER_COMPLETION, done=True)),
)


def _expected_text(events: list[AgentEvent]) -> tuple[dict[str, str], str]:
    """Text per named response id (all its deltas; its completion's text only when the id
    never streamed) and the concatenated text of the id-less deltas, up to the end."""
    named: dict[str, str] = {}
    anonymous = ""
    for event in events:
        if event.error is not None or event.is_runner_completion():
            break
        if event.object == ObjectType.CHUNK:
            delta = event.choices[0].delta.content
            if delta and event.id:
                named[event.id] = named.get(event.id, "") + delta
            elif delta:
                anonymous += delta
        elif event.object == ObjectType.COMPLETION and event.id not in named:
            content = event.choices[0].message.content
            if content and event.id:
                named[event.id] = content
    return named, anonymous


@settings(max_examples=400, deadline=None)
@given(st.lists(EVENTS, max_size=25), st.sampled_from(["finish", "cancel"]))
def test_any_event_sequence_gives_a_valid_agui_sequence(events: list[AgentEvent], end: str) -> None:
    out = translate(events, end)
    text = check_sequence(out)
    named, anonymous = _expected_text(events)
    for rid, expected in named.items():
        assert text.get(rid, "") == expected
    has_anonymous_final = any(
        e.object == ObjectType.COMPLETION and not e.id and e.choices[0].message.content
        for e in events
    )
    if not has_anonymous_final:
        generated = [i for i in text if i.startswith("msg-")]
        assert "".join(text[i] for i in generated) == anonymous
