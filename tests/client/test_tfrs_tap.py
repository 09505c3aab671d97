"""The client's progress tap: plain working text stays content until the peer shows it
speaks tfrs (an update with a ``tfrs`` key, or a card that declares the extension);
from then on working text is progress (docs/specs/tfrs-progress.md §7, departure 2)."""

from __future__ import annotations

import json
from typing import Any

from trpc_bridge.client.progress import ProgressTap
from trpc_bridge.codecs.a2a.frames import Frame, read_result
from trpc_bridge.codecs.tfrs import ProgressItem


def _working(text: str, envelope: dict[str, Any] | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"kind": "text", "text": text}
    if envelope is not None:
        part["metadata"] = {"tfrs": json.dumps(envelope)}
    return {
        "kind": "status-update",
        "taskId": "t",
        "contextId": "c",
        "status": {
            "state": "working",
            "message": {"kind": "message", "messageId": text, "role": "agent", "parts": [part]},
        },
    }


def _w(text: str, envelope: dict[str, Any] | None = None) -> Frame:
    return read_result(_working(text, envelope))


BARE = {"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}}
THINKING = {"v": 1, "kind": "thinking", "seq": 1, "status": "running", "payload": {"text": "hm"}}


def test_plain_text_is_content_until_the_peer_speaks_tfrs() -> None:
    seen: list[ProgressItem] = []
    tap = ProgressTap(sink=seen.append, as_events=True)
    events, content = tap.take(_w("hello"))
    assert events == [] and content == _w("hello") and not tap.speaks_tfrs
    events, content = tap.take(_w("hm", THINKING))
    assert [e.choices[0].delta.reasoning_content for e in events] == ["hm"]
    assert content == read_result(BARE) and tap.speaks_tfrs
    events, content = tap.take(_w("later"))
    assert [e.choices[0].delta.reasoning_content for e in events] == ["later"]
    assert content == read_result(BARE)
    assert [i.text for i in seen] == ["hello", "hm", "later"]  # the sink gets them all


def test_a_card_that_declares_tfrs_makes_working_text_progress_at_once() -> None:
    tap = ProgressTap(sink=None, as_events=False, speaks_tfrs=True)
    events, content = tap.take(_w("hello"))
    # A trpc peer: progress goes nowhere but out.
    assert events == [] and content == read_result(BARE)
