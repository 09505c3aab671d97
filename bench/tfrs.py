"""tfrs progress cost: what turning progress envelopes on adds to a streamed turn.

Producer: the trpc stream encoder alone (the baseline: what every streamed turn pays)
against the same encoder plus the tfrs producer and its ``working`` updates, over
``bench/codec.py``'s event mix. Consumer: the trpc stream decoder over the artifact
frames (baseline) against the progress consumer (read + merge) over the working frames
of the same turn, both from the 1.0 JSON a2a-sdk transports hand over.

Run: ``make bench`` (or ``.venv/bin/python bench/tfrs.py``).
"""

from __future__ import annotations

from typing import Any

from a2a.types import StreamResponse
from codec import best_of, codec_frames, decode, event_mix, to_wire
from google.protobuf.json_format import MessageToDict

from trpc_bridge.codecs.tfrs import ProgressConsumer, ProgressProducer, working_update
from trpc_bridge.events import AgentEvent


def progress_frames(events: list[AgentEvent]) -> list[Any]:
    producer = ProgressProducer()
    updates = [u for event in events for u in producer.updates(event)] + producer.close()
    return [working_update(u, task_id="t", context_id="c") for u in updates]


def with_progress(events: list[AgentEvent]) -> int:
    return len(codec_frames(events)) + len(progress_frames(events))


def consume(wire: list[dict[str, Any]]) -> int:
    consumer = ProgressConsumer()
    return sum(len(consumer.feed(frame)) for frame in wire)


def main() -> None:
    events = event_mix() * 20  # ≈ 2,000 events per round
    n = len(events)
    base = best_of(lambda: codec_frames(events))
    both = best_of(lambda: with_progress(events))
    progress_wire = [
        MessageToDict(StreamResponse(status_update=f)) for f in progress_frames(events)
    ]
    artifact_wire = to_wire(codec_frames(events))
    decoded = best_of(lambda: decode(artifact_wire))
    consumed = best_of(lambda: consume(progress_wire))
    print(f"events per round: {n}; progress updates per round: {len(progress_wire)}")
    print(f"trpc encode alone:               {n / base:12,.0f} events/s")
    print(f"trpc encode + tfrs progress:     {n / both:12,.0f} events/s")
    print(f"ratio with / without progress:   {both / base:12.2f}x the time")
    print(f"trpc decode (artifact frames):   {n / decoded:12,.0f} events/s")
    print(f"tfrs consume (working frames):   {len(progress_wire) / consumed:12,.0f} updates/s")
    print(f"ratio consume / decode:          {consumed / decoded:12.2f}x the time")


if __name__ == "__main__":
    main()
