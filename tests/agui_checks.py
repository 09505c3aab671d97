"""Shared by the AG-UI tests: the smallest ``RunAgentInput`` a client posts, a checker for
the rules ``@ag-ui/client`` enforces on an event sequence, and a deterministic id factory
for the translator."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any


def run_input(
    text: str = "hi", *, thread: str = "t", run: str = "r", message: str = "m"
) -> dict[str, Any]:
    """A ``RunAgentInput`` of one user message and nothing else (every field present, as
    ``@ag-ui/client`` sends it)."""
    return {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": message, "role": "user", "content": text}],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


def counting_ids() -> Callable[[str], str]:
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}-{next(counter)}"


def check_sequence(events: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Assert the AG-UI sequence rules; return the text per text-message id.

    ``events`` are wire dicts (camelCase). Rules: RUN_STARTED first, exactly one terminal
    event and it is last, every START ended before the terminal event, no CONTENT/ARGS/
    END outside its START…END, no START of something already open, result message ids
    unique and distinct from text and reasoning ids, reasoning ids distinct from text ids.
    """
    events = list(events)
    assert events, "empty sequence"
    assert events[0]["type"] == "RUN_STARTED"
    assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR")
    terminals = [e for e in events if e["type"] in ("RUN_FINISHED", "RUN_ERROR")]
    assert len(terminals) == 1, "one terminal event"
    open_text: set[str] = set()
    open_reasoning: set[str] = set()
    open_spans: set[str] = set()
    open_calls: set[str] = set()
    text_ids: set[str] = set()
    reasoning_ids: set[str] = set()
    result_ids: set[str] = set()
    started_calls: set[str] = set()
    text: dict[str, str] = {}
    for event in events[1:-1]:
        kind = event["type"]
        if kind == "TEXT_MESSAGE_START":
            assert event["messageId"] not in open_text, event
            assert not open_text, "serial text streams"
            open_text.add(event["messageId"])
            text_ids.add(event["messageId"])
            text.setdefault(event["messageId"], "")
        elif kind == "TEXT_MESSAGE_CONTENT":
            assert event["messageId"] in open_text, event
            text[event["messageId"]] += event["delta"]
        elif kind == "TEXT_MESSAGE_END":
            assert event["messageId"] in open_text, event
            open_text.remove(event["messageId"])
        elif kind == "REASONING_START":
            assert event["messageId"] not in open_spans, event
            open_spans.add(event["messageId"])
        elif kind == "REASONING_MESSAGE_START":
            assert event["messageId"] in open_spans, event
            assert event["messageId"] not in open_reasoning, event
            open_reasoning.add(event["messageId"])
            reasoning_ids.add(event["messageId"])
        elif kind == "REASONING_MESSAGE_CONTENT":
            assert event["messageId"] in open_reasoning, event
        elif kind == "REASONING_MESSAGE_END":
            assert event["messageId"] in open_reasoning, event
            open_reasoning.remove(event["messageId"])
        elif kind == "REASONING_END":
            assert event["messageId"] in open_spans, event
            assert event["messageId"] not in open_reasoning, "message ended before span"
            open_spans.remove(event["messageId"])
        elif kind == "TOOL_CALL_START":
            assert event["toolCallId"] not in started_calls, "each tool call started once"
            started_calls.add(event["toolCallId"])
            open_calls.add(event["toolCallId"])
        elif kind in ("TOOL_CALL_ARGS", "TOOL_CALL_END"):
            assert event["toolCallId"] in open_calls, event
            if kind == "TOOL_CALL_END":
                open_calls.remove(event["toolCallId"])
        elif kind == "TOOL_CALL_RESULT":
            assert event["messageId"] not in result_ids, "unique result message ids"
            result_ids.add(event["messageId"])
        else:
            assert kind not in ("RUN_STARTED", "RUN_FINISHED", "RUN_ERROR"), kind
    assert not (open_text or open_reasoning or open_spans or open_calls), "all ended"
    assert not (text_ids & reasoning_ids), "reasoning ids distinct from text ids"
    assert not (result_ids & (text_ids | reasoning_ids)), "result ids distinct"
    return text
