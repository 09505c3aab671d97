"""AG-UI translator throughput against the floor of merely iterating the same events.

One run is one agent turn (bench/codec.py's event mix plus a state delta, ≈ 100 events)
translated by a fresh :class:`AguiTranslator`; a round is many runs. The floor iterates the
same events and does nothing with them, so the ratio is the translator's whole cost per
event. Translate + SSE encoding (``ag_ui.encoder.EventEncoder``, what ``/agui`` writes) is
printed too, since pydantic serialisation usually dominates the translation itself.

Run: ``make bench`` (or ``.venv/bin/python bench/agui.py``).
"""

from __future__ import annotations

from ag_ui.encoder import EventEncoder
from codec import best_of, event_mix

from trpc_bridge.codecs.agui.translator import AguiTranslator
from trpc_bridge.events import AgentEvent

RUNS = 200


def one_turn() -> list[AgentEvent]:
    return [*event_mix(), AgentEvent.state({"city": b'"Beijing"', "turns": b"3"})]


def floor(runs: list[list[AgentEvent]]) -> int:
    n = 0
    for events in runs:
        for _ in events:
            n += 1
    return n


def translate(runs: list[list[AgentEvent]]) -> int:
    n = 0
    for i, events in enumerate(runs):
        translator = AguiTranslator("thread", f"run-{i}")
        for event in events:
            n += len(translator.translate(event))
        n += len(translator.finish())
    return n


def translate_and_encode(runs: list[list[AgentEvent]]) -> int:
    encoder = EventEncoder()
    size = 0
    for i, events in enumerate(runs):
        translator = AguiTranslator("thread", f"run-{i}")
        for event in events:
            for out in translator.translate(event):
                size += len(encoder.encode(out))
        for out in translator.finish():
            size += len(encoder.encode(out))
    return size


def main() -> None:
    runs = [one_turn() for _ in range(RUNS)]
    n = sum(len(events) for events in runs)
    agui_events = translate(runs)
    base = best_of(lambda: floor(runs))
    translated = best_of(lambda: translate(runs))
    encoded = best_of(lambda: translate_and_encode(runs))
    print(f"agent events per round: {n} ({RUNS} runs) → {agui_events} AG-UI events")
    print(f"floor (iterate only):          {n / base:14,.0f} events/s")
    print(f"translate:                     {n / translated:14,.0f} events/s")
    print(f"translate + SSE encode:        {n / encoded:14,.0f} events/s")
    per_event = f"translate {translated / n * 1e6:.2f} µs, with encode {encoded / n * 1e6:.2f} µs"
    print(f"per agent event: {per_event}")
    print(f"ratio translate / floor:       {translated / base:14.1f}x the floor's time")
    print(f"ratio translate+encode / floor:{encoded / base:14.1f}x the floor's time")


if __name__ == "__main__":
    main()
