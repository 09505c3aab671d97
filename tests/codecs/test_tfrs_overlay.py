"""The progress overlay beside the trpc and plain-A2A stream encodings: the inner
encoding's frames are unchanged, each event's progress comes before its own frames,
open tools close before the end, and nothing follows the terminal state."""

from __future__ import annotations

from typing import Any

import pytest
from a2a.types import StreamResponse, TaskState, TaskStatusUpdateEvent
from google.protobuf.json_format import MessageToDict

from trpc_bridge.codecs.encoding import EncodingRequest, RunTarget, select_encoding, stream_encoding
from trpc_bridge.codecs.tfrs import EXTENSION_URI, REQUEST_METADATA_KEY, ProgressConsumer
from trpc_bridge.codecs.tfrs.overlay import ProgressOverlay
from trpc_bridge.events import AgentEvent

TURN = [
    AgentEvent.reasoning_delta("Weather?", "r1"),
    AgentEvent.tool_call("get_weather", {"city": "Beijing"}, call_id="c1", response_id="r1"),
    AgentEvent.tool_result("c1", "get_weather", {"temp": "20°C"}),
    AgentEvent.tool_call("notify", {}, call_id="c2", response_id="r2"),
    AgentEvent.text_delta("It is 20°C.", "r3"),
    AgentEvent.final_text("It is 20°C.", "r3"),
]


RUN = RunTarget(task_id="t", context_id="c")


def _inner(kind: str) -> Any:
    return select_encoding(kind, EncodingRequest()).stream(RUN)


def _wire(frame: Any) -> dict[str, Any]:
    key = "status_update" if isinstance(frame, TaskStatusUpdateEvent) else "artifact_update"
    wire: dict[str, Any] = MessageToDict(StreamResponse(**{key: frame}))
    for body in wire.values():  # timestamps and fresh ids differ between two runs
        body.get("status", {}).pop("timestamp", None)
        body.get("status", {}).get("message", {}).pop("messageId", None)
    return wire


def _is_progress(frame: Any) -> bool:
    return (
        isinstance(frame, TaskStatusUpdateEvent)
        and frame.status.state == TaskState.TASK_STATE_WORKING
    )


def _run(encoder: Any, events: list[AgentEvent], *, close: bool = True) -> list[Any]:
    frames = list(encoder.start(app_name="a", user_id="u"))
    frames += [f for e in events for f in encoder.encode(e)]
    return frames + (encoder.close() if close else [])


@pytest.mark.parametrize("kind", ["trpc", "plain"])
def test_inner_frames_are_unchanged_and_progress_comes_first(kind: str) -> None:
    alone = _run(_inner(kind), TURN)
    overlay = ProgressOverlay(_inner(kind), task_id="t", context_id="c")
    woven = _run(overlay, TURN)
    assert [_wire(f) for f in woven if not _is_progress(f)] == [_wire(f) for f in alone]
    assert not _is_progress(woven[-1]) and woven[-1].status.state == TaskState.TASK_STATE_COMPLETED
    consumer = ProgressConsumer()
    for frame in woven:
        consumer.feed(_wire(frame))
    streams = consumer.merger("t").streams()
    assert {k: v.status for k, v in streams.items() if k} == {"c1": "done", "c2": "done"}
    # The still-open call c2 is closed before the inner encoder's final frames.
    done_c2 = max(i for i, f in enumerate(woven) if _is_progress(f))
    assert all(not _is_progress(f) for f in woven[done_c2 + 1 :])


def test_progress_of_an_event_precedes_its_artifact() -> None:
    overlay = ProgressOverlay(_inner("trpc"), task_id="t", context_id="c")
    frames = overlay.encode(TURN[1])
    assert [_is_progress(f) for f in frames] == [True, False]


def test_terminal_error_aborts_open_tools_and_nothing_follows() -> None:
    overlay = ProgressOverlay(_inner("trpc"), task_id="t", context_id="c")
    events = [*TURN[:4], AgentEvent.failure("backend down"), AgentEvent.text_delta("x", "r9")]
    frames = _run(overlay, events)
    assert frames[-1].status.state == TaskState.TASK_STATE_FAILED
    consumer = ProgressConsumer()
    for frame in frames:
        consumer.feed(_wire(frame))
    merger = consumer.merger("t")
    assert merger.streams()["c2"].status == "aborted"
    assert merger.blocks[-2].kind == "error" and merger.blocks[-2].status == "aborted"


def test_runner_completion_closes_open_tools_before_completed() -> None:
    overlay = ProgressOverlay(_inner("trpc"), task_id="t", context_id="c")
    completion = AgentEvent(object="runner.completion", done=True)
    frames = _run(overlay, [*TURN[:4], completion], close=False)
    assert frames[-1].status.state == TaskState.TASK_STATE_COMPLETED
    assert overlay.done and overlay.close() == [] and overlay.encode(TURN[0]) == []
    progress = [f for f in frames if _is_progress(f)]
    assert '"status":"done"' in progress[-1].status.message.parts[0].metadata["tfrs"]


@pytest.mark.parametrize(
    ("request_", "wrapped"),
    [
        (EncodingRequest(), False),
        (EncodingRequest(extensions=frozenset({EXTENSION_URI})), True),
        (EncodingRequest(metadata={REQUEST_METADATA_KEY: True}), True),
        (EncodingRequest(metadata={REQUEST_METADATA_KEY: "yes"}), False),
        (EncodingRequest(extensions=frozenset({"other"})), False),
    ],
)
@pytest.mark.parametrize("policy", ["auto", "always", "never"])
def test_the_seam_wraps_only_for_callers_who_ask(
    request_: EncodingRequest, wrapped: bool, policy: str
) -> None:
    encoder = stream_encoding(policy, request_, RUN)
    assert isinstance(encoder, ProgressOverlay) == wrapped
    if wrapped:
        assert isinstance(encoder, ProgressOverlay)
        inner = select_encoding(policy, request_).stream(RUN)
        assert type(encoder.inner) is type(inner)
