"""Property: whatever the interleaving of pushes and reads, a subscriber's output is the
input with consecutive text deltas possibly merged — every frame's content, in order,
nothing lost, nothing repeated."""

from __future__ import annotations

import asyncio

from a2a.types import Artifact, Part, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent
from hypothesis import given, settings
from hypothesis import strategies as st

from trpc_bridge.codecs.encoding import StreamFrame
from trpc_bridge.codecs.trpc.encode import task_status
from trpc_bridge.server.tasks.subscriber import Subscriber

# A frame: ("text", artifact, append, text), ("data", artifact) or ("status",)
_text = st.tuples(st.just("text"), st.sampled_from(["a", "b"]), st.booleans(), st.text(max_size=3))
_other = st.one_of(st.tuples(st.just("data"), st.sampled_from(["a", "b"])), st.just(("status",)))
_script = st.lists(st.tuples(st.one_of(_text, _other), st.integers(0, 2)), max_size=60)


def _frame(spec: tuple[object, ...]) -> StreamFrame:
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


def _flatten(frames: list[StreamFrame]) -> list[tuple[str, str]]:
    """(kind, content) per character of text, per non-text frame: merging-invariant."""
    out: list[tuple[str, str]] = []
    for frame in frames:
        if isinstance(frame, TaskArtifactUpdateEvent):
            part = frame.artifact.parts[0]
            if part.WhichOneof("content") == "text":
                out += [(f"text:{frame.artifact.artifact_id}", ch) for ch in part.text]
            else:
                out.append(("data", frame.artifact.artifact_id))
        else:
            out.append(("status", ""))
    return out


@settings(max_examples=300, deadline=None)
@given(_script, st.integers(0, 4), st.booleans())
def test_output_is_the_input_merged(
    script: list[tuple[tuple[object, ...], int]], lag: int, batches: bool
) -> None:
    """Read frame by frame (``next``) or all that is buffered at once (``next_batch``)."""

    async def read(subscriber: Subscriber) -> list[StreamFrame] | None:
        if batches:
            return await subscriber.next_batch()
        item = await subscriber.next()
        return None if item is None else [item]

    async def run() -> tuple[list[StreamFrame], list[StreamFrame]]:
        subscriber = Subscriber(coalesce_after=lag)
        sent: list[StreamFrame] = []
        received: list[StreamFrame] = []
        for spec, reads in script:
            frame = _frame(spec)
            sent.append(frame)
            subscriber.push(frame)
            for _ in range(reads):
                if not len(subscriber):
                    break
                items = await read(subscriber)
                assert items
                received.extend(items)
        subscriber.close()
        while (items := await read(subscriber)) is not None:
            received.extend(items)
        return sent, received

    sent, received = asyncio.run(run())
    assert _flatten(received) == _flatten(sent)
    assert len(received) <= len(sent)
    for frame in received:  # merges only ever join text continuations of one artifact
        if isinstance(frame, TaskArtifactUpdateEvent):
            assert len(frame.artifact.parts) == 1
