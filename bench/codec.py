"""Codec throughput: encode + decode of a realistic event mix, against the floor.

The floor builds, for the same events, the a2a-sdk protobuf artifact updates directly
(hard-coded parts and metadata, no dispatch) — what any A2A server has to pay anyway.
The codec adds trpc's dispatch rules and metadata on top; the ratio says how much.
Decoding is measured on the 1.0 JSON shape JSON-RPC 1.0 hands to the client; reading the
protobufs the a2a-sdk transports (REST, gRPC) hand it is measured against the
``MessageToDict`` round trip it replaced.

Run: ``make bench`` (or ``.venv/bin/python bench/codec.py``).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

from a2a.types import Artifact, Part, StreamResponse, TaskArtifactUpdateEvent
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Value

from trpc_bridge.codecs.a2a.frames import read_result
from trpc_bridge.codecs.a2a.proto_frames import read_proto
from trpc_bridge.codecs.encoding import EncodeOptions, RunTarget
from trpc_bridge.codecs.trpc.decode import StreamDecoder
from trpc_bridge.codecs.trpc.runs import StreamEncoder
from trpc_bridge.events import AgentEvent

ROUNDS = 15


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


def to_protos(frames: list[object]) -> list[StreamResponse]:
    return [
        StreamResponse(artifact_update=frame)
        if isinstance(frame, TaskArtifactUpdateEvent)
        else StreamResponse(status_update=frame)  # type: ignore[arg-type]
        for frame in frames
    ]


def to_wire(frames: list[object]) -> list[dict[str, object]]:
    return [MessageToDict(response) for response in to_protos(frames)]


def read_protos(responses: list[StreamResponse]) -> int:
    """What the REST and gRPC transports do with each result."""
    return len([read_proto(response) for response in responses])


def read_protos_as_json(responses: list[StreamResponse]) -> int:
    """What they did before: protobuf → 1.0 JSON → frames."""
    return len([read_result(MessageToDict(response)) for response in responses])


def decode(wire: list[dict[str, object]]) -> int:
    decoder = StreamDecoder()
    return sum(len(decoder.feed(frame)) for frame in wire)


def timed(fn: Callable[[], object]) -> float:
    """One run of ``fn`` with the cyclic collector off (it would fire at a different
    point of each side's allocations) and the previous round's garbage collected."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


def best_of(fn: Callable[[], object], rounds: int = ROUNDS) -> float:
    return min(timed(fn) for _ in range(rounds))


def paired(
    fn: Callable[[], object], base: Callable[[], object], rounds: int = ROUNDS
) -> tuple[float, float, list[float]]:
    """Best times of ``fn`` and ``base`` run alternately, and the per-round ratios: on a
    shared machine the load changes within seconds, so only a pair measured back to back
    compares like with like (the median of the ratios is the figure to read)."""
    times: list[tuple[float, float]] = [(timed(fn), timed(base)) for _ in range(rounds)]
    return (
        min(t for t, _ in times),
        min(b for _, b in times),
        sorted(t / b for t, b in times),
    )


def encode_ratio() -> float:
    """The encoder's time over the floor's (median of the paired rounds)."""
    events = event_mix() * 20
    _, _, ratios = paired(lambda: codec_frames(events), lambda: floor_frames(events))
    return ratios[len(ratios) // 2]


def main() -> None:
    events = event_mix() * 20  # ≈ 2,000 events per round
    n = len(events)
    encode, floor, ratios = paired(lambda: codec_frames(events), lambda: floor_frames(events))
    wire = to_wire(codec_frames(events))
    decoded = best_of(lambda: decode(wire))
    print(f"events per round: {n}")
    print(f"floor (hand-built protobuf updates): {n / floor:12,.0f} events/s")
    print(f"codec encode:                        {n / encode:12,.0f} events/s")
    print(f"codec decode (1.0 JSON → events):    {n / decoded:12,.0f} events/s")
    print(f"codec encode+decode:                 {n / (encode + decoded):12,.0f} events/s")
    median = ratios[len(ratios) // 2]
    print(
        f"ratio encode / floor:                {median:12.2f}x the floor's time"
        f" (median of {len(ratios)} paired rounds, {ratios[0]:.2f}-{ratios[-1]:.2f})"
    )
    print(
        f"ratio encode+decode / floor:         {(encode + decoded) / floor:12.2f}x the floor's time"
    )
    protos = to_protos(codec_frames(events))
    direct, round_trip, read_ratios = paired(
        lambda: read_protos(protos), lambda: read_protos_as_json(protos)
    )
    print(f"client read, protobuf → frames:      {len(protos) / direct:12,.0f} frames/s")
    print(f"client read, via MessageToDict:      {len(protos) / round_trip:12,.0f} frames/s")
    print(
        f"ratio read / MessageToDict read:     {read_ratios[len(read_ratios) // 2]:12.2f}x its time"
        f" (median of {len(read_ratios)} paired rounds)"
    )


if __name__ == "__main__":
    main()
