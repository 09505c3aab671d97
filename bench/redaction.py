"""Redaction cost: what masking secrets adds to a served turn's events.

The server's runner passes every run's events through the redaction policy
(``bridge/redaction.py``) before any encoder: thinking deltas through a stream redactor,
everything else past one check. Measured here: ``bench/codec.py``'s event mix (reasoning,
a tool round, code, a streamed answer) through the policy alone, and the trpc stream
encoder alone against redaction + the encoder (what a served stream pays), paired round
by round; then a thinking-only stream. The default policy against none (``--no-redact``).

Run: ``make bench`` (or ``.venv/bin/python bench/redaction.py``).
"""

from __future__ import annotations

from statistics import median

from codec import codec_frames, event_mix, paired

from trpc_bridge.events import AgentEvent
from trpc_bridge.redaction import EventRedactor, Redaction


def redacted(events: list[AgentEvent]) -> list[AgentEvent]:
    redactor = EventRedactor(Redaction())
    out = [shown for event in events for shown in redactor.events(event)]
    return out + redactor.close()


def main() -> None:
    events = event_mix() * 20  # ≈ 2,000 events per round
    n = len(events)
    thinking = [
        AgentEvent.reasoning_delta(f"the user asks about item {i}; ", "r1") for i in range(n)
    ]
    alone, _, _ = paired(lambda: redacted(events), lambda: None)
    both, encode, ratios = paired(
        lambda: codec_frames(redacted(events)), lambda: codec_frames(events)
    )
    _, _, think_ratios = paired(
        lambda: codec_frames(redacted(thinking)), lambda: codec_frames(thinking)
    )
    print(f"events per round: {n}")
    print(f"redaction alone (event mix):        {alone / n * 1e6:8.2f} µs/event")
    print(f"trpc encode:                        {n / encode:12,.0f} events/s")
    print(f"redaction + trpc encode:            {n / both:12,.0f} events/s")
    print(f"ratio with / without redaction:     {median(ratios):12.2f}x the time (median)")
    print(f"thinking deltas only, ratio:        {median(think_ratios):12.2f}x the time (median)")


if __name__ == "__main__":
    main()
