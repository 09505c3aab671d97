"""Property: whatever the interleaving of pushes and reads, a subscriber's output is the
input with consecutive text deltas possibly merged — every frame's content, in order,
nothing lost, nothing repeated; for protobuf text updates and for text deltas (a
``TextSubscriber``) alike."""

from __future__ import annotations

import asyncio

from a2a.types import Artifact, Part, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from hypothesis import given, settings
from hypothesis import strategies as st

from trpc_bridge.codecs.a2a.text_delta import TextDelta, TextRuns
from trpc_bridge.codecs.encoding import RunFrame
from trpc_bridge.codecs.trpc.stream_frames import task_status
from trpc_bridge.server.tasks.subscriber import Subscriber, SubscriberBase, TextSubscriber

# A frame: ("text", artifact, append, text), ("data", artifact) or ("status",)
_text = st.tuples(st.just("text"), st.sampled_from(["a", "b"]), st.booleans(), st.text(max_size=3))
_other = st.one_of(st.tuples(st.just("data"), st.sampled_from(["a", "b"])), st.just(("status",)))
_script = st.lists(st.tuples(st.one_of(_text, _other), st.integers(0, 2)), max_size=60)


def _frame(spec: tuple[object, ...], runs: TextRuns | None) -> RunFrame:
    """``runs``: text as text deltas of those runs (else protobuf)."""
    if spec[0] == "text" and runs is not None:
        _, artifact, append, text = spec
        return TextDelta(runs.run(str(artifact), bool(append), {}, None), str(text))
    if spec[0] == "text":
        _, artifact, append, text = spec
        return TaskArtifactUpdateEvent(
            artifact=Artifact(artifact_id=str(artifact), parts=[Part(text=str(text))]),
            append=bool(append),
        )
    if spec[0] == "data":
        part = Part()
        part.data.struct_value.update({"k": "v"})
        return TaskArtifactUpdateEvent(artifact=Artifact(artifact_id=str(spec[1]), parts=[part]))
    return TaskStatusUpdateEvent(status=task_status(TaskState.TASK_STATE_WORKING))


def _flatten(frames: list[RunFrame]) -> list[tuple[str, str]]:
    """(kind, content) per character of text, per non-text frame: merging-invariant."""
    out: list[tuple[str, str]] = []
    for frame in frames:
        if isinstance(frame, TextDelta):
            out += [(f"text:{frame.run.artifact_id}", ch) for ch in frame.text]
        elif isinstance(frame, TaskArtifactUpdateEvent):
            part = frame.artifact.parts[0]
            if part.WhichOneof("content") == "text":
                out += [(f"text:{frame.artifact.artifact_id}", ch) for ch in part.text]
            else:
                out.append(("data", frame.artifact.artifact_id))
        else:
            out.append(("status", ""))
    return out


@settings(max_examples=300, deadline=None)
@given(_script, st.integers(0, 4), st.booleans(), st.booleans())
def test_output_is_the_input_merged(
    script: list[tuple[tuple[object, ...], int]], lag: int, batches: bool, deltas: bool
) -> None:
    """Read frame by frame (``next``) or all that is buffered at once (``next_batch``);
    ``deltas``: text as text deltas into a ``TextSubscriber``."""

    async def read(subscriber: SubscriberBase[RunFrame]) -> list[RunFrame] | None:
        if batches:
            return await subscriber.next_batch()
        item = await subscriber.next()
        return None if item is None else [item]

    async def run() -> tuple[list[RunFrame], list[RunFrame]]:
        subscriber = TextSubscriber(coalesce_after=lag) if deltas else Subscriber(lag)
        runs = TextRuns("t", "c") if deltas else None
        sent: list[RunFrame] = []
        received: list[RunFrame] = []
        for spec, reads in script:
            frame = _frame(spec, runs)
            sent.append(frame)
            if isinstance(frame, TextDelta):
                subscriber.push_text(frame)
            else:
                subscriber.push(frame)
            for _ in range(reads):
                if not len(subscriber):
                    break
                items = await read(subscriber)  # type: ignore[arg-type]
                assert items
                received.extend(items)
        subscriber.close()
        while (items := await read(subscriber)) is not None:  # type: ignore[arg-type]
            received.extend(items)
        return sent, received

    sent, received = asyncio.run(run())
    assert _flatten(received) == _flatten(sent)
    assert len(received) <= len(sent)
    for frame in received:  # merges only ever join text continuations of one artifact
        if isinstance(frame, TaskArtifactUpdateEvent):
            assert len(frame.artifact.parts) == 1
    # A text delta reaches only a subscriber that asked for them; the other gets protobuf.
    assert all(isinstance(frame, TextDelta) == deltas for frame in received if _is_text(frame))


def _is_text(frame: RunFrame) -> bool:
    return isinstance(frame, TextDelta) or (
        isinstance(frame, TaskArtifactUpdateEvent)
        and frame.artifact.parts[0].WhichOneof("content") == "text"
    )


def test_a_protobuf_subscriber_gets_text_deltas_as_protobuf() -> None:
    run = TextRuns("t", "c").run("a", False, {"object_type": "x"}, None)
    subscriber = Subscriber()
    subscriber.push_text(TextDelta(run, "hi"))
    (frame,) = asyncio.run(subscriber.next_batch()) or []
    assert frame == run.frame("hi") and frame.artifact.parts[0].text == "hi"
