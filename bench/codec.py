"""Codec throughput: encode + decode of a realistic event mix, against the floor.

The floor builds, for the same events, the a2a-sdk protobuf artifact updates directly
(hard-coded parts and metadata, no dispatch) — what any A2A server has to pay anyway.
The codec adds trpc's dispatch rules and metadata on top; the ratio says how much.
Decoding is measured on the 1.0 JSON shape that a2a-sdk transports hand to the client.

Run: ``make bench`` (or ``.venv/bin/python bench/codec.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from a2a.types import Artifact, Part, StreamResponse, TaskArtifactUpdateEvent
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Value

from trpc_bridge.codecs.encoding import EncodeOptions, RunTarget
from trpc_bridge.codecs.trpc_decode import StreamDecoder
from trpc_bridge.codecs.trpc_runs import StreamEncoder
from trpc_bridge.events import AgentEvent

ROUNDS = 5


def event_mix() -> list[AgentEvent]:
    """One agent turn: reasoning, a tool round, code, and a streamed answer (≈ 100 events)."""
    first, answer = "chatcmpl-bench-1", "chatcmpl-bench-2"
    events = [AgentEvent.reasoning_delta(f"thinking {i} ", first) for i in range(20)]
    events.append(
        AgentEvent.tool_call("get_weather", {"city": "Beijing"}, call_id="c1", response_id=first)
    )
    events.append(AgentEvent.tool_result("c1", "get_weather", {"city": "Beijing", "temp": "20°C"}))
    events.append(AgentEvent.code("print(6 * 7)"))
    events.append(AgentEvent.code_result("42\n"))
    events += [AgentEvent.text_delta(f"token{i} ", answer) for i in range(75)]
    events.append(AgentEvent.final_text("".join(f"token{i} " for i in range(75)), answer))
    return events


def floor_frames(events: list[AgentEvent]) -> list[TaskArtifactUpdateEvent]:
    """The same artifact updates built by hand: the cost any A2A server pays."""
    frames = []
    for event in events:
        choice = event.choices[0] if event.choices else None
        message = (
            choice.delta if event.is_partial and choice else choice.message if choice else None
        )
        parts: list[Part] = []
        if message is not None:
            if message.reasoning_content:
                part = Part(text=message.reasoning_content)
                part.metadata.update({"thought": True})
                parts.append(part)
            if message.content:
                parts.append(Part(text=message.content))
            for call in message.tool_calls:
                data = {"args": call.function.arguments, "id": call.id, "name": call.function.name}
                parts.append(Part(data=ParseDict(data, Value())))
        update = TaskArtifactUpdateEvent(
            task_id="t", context_id="c", artifact=Artifact(artifact_id=event.id, parts=parts)
        )
        update.metadata.update({"llm_response_id": event.id, "object_type": event.object})
        frames.append(update)
    return frames


def codec_frames(events: list[AgentEvent]) -> list[object]:
    encoder = StreamEncoder(RunTarget(task_id="t", context_id="c", options=EncodeOptions()))
    frames: list[object] = []
    for event in events:
        frames.extend(encoder.encode(event))
    frames.extend(encoder.close())
    return frames


def to_wire(frames: list[object]) -> list[dict[str, object]]:
    wire = []
    for frame in frames:
        if isinstance(frame, TaskArtifactUpdateEvent):
            wire.append(MessageToDict(StreamResponse(artifact_update=frame)))
        else:
            wire.append(MessageToDict(StreamResponse(status_update=frame)))  # type: ignore[arg-type]
    return wire


def decode(wire: list[dict[str, object]]) -> int:
    decoder = StreamDecoder()
    return sum(len(decoder.feed(frame)) for frame in wire)


def best_of(fn: Callable[[], object], rounds: int = ROUNDS) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    events = event_mix() * 20  # ≈ 2,000 events per round
    n = len(events)
    floor = best_of(lambda: floor_frames(events))
    encode = best_of(lambda: codec_frames(events))
    wire = to_wire(codec_frames(events))
    decoded = best_of(lambda: decode(wire))
    print(f"events per round: {n}")
    print(f"floor (hand-built protobuf updates): {n / floor:12,.0f} events/s")
    print(f"codec encode:                        {n / encode:12,.0f} events/s")
    print(f"codec decode (1.0 JSON → events):    {n / decoded:12,.0f} events/s")
    print(f"codec encode+decode:                 {n / (encode + decoded):12,.0f} events/s")
    print(f"ratio encode / floor:                {encode / floor:12.2f}x the floor's time")
    print(
        f"ratio encode+decode / floor:         {(encode + decoded) / floor:12.2f}x the floor's time"
    )


if __name__ == "__main__":
    main()
