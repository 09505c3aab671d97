"""What the E2A step costs the ACP door, against building the same ACP updates directly.

One run is one agent turn (bench/codec.py's event mix, ≈ 100 events). The door's path
turns each event into E2A records (``E2AEventEncoder``: typed, sequenced, checked) and each
record into its ACP ``session/update`` JSON. The baseline builds the ACP updates straight
from the events with the ``agent-client-protocol`` SDK's own builders and serialises them
the same way, with no E2A in between: the ratio is what the normal form adds per event.

Run: ``make bench`` (or ``.venv/bin/python bench/e2a.py``).
"""

from __future__ import annotations

import json
from typing import Any

from acp import (
    session_notification,
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from codec import best_of, event_mix

from trpc_bridge.codecs.e2a import (
    E2AEnvelope,
    E2AEventEncoder,
    ResponseSequencer,
    e2a_response_to_acp_notification,
    log_line,
)
from trpc_bridge.events import AgentEvent

RUNS = 100


def direct(runs: list[list[AgentEvent]]) -> int:
    """The floor: SDK builders straight from the events (deltas only, no dedupe)."""
    n = 0
    for events in runs:
        for event in events:
            for choice in event.choices:
                updates: list[Any] = []
                if event.is_partial and choice.delta.content:
                    updates.append(update_agent_message_text(choice.delta.content))
                elif event.is_partial and choice.delta.reasoning_content:
                    updates.append(update_agent_thought_text(choice.delta.reasoning_content))
                for call in choice.message.tool_calls:
                    args = json.loads(call.function.arguments or "null")
                    updates.append(start_tool_call(call.id, call.function.name, raw_input=args))
                if choice.message.tool_id:
                    updates.append(update_tool_call(choice.message.tool_id, status="completed"))
                for update in updates:
                    notification = session_notification("s1", update)
                    n += len(notification.model_dump(mode="json", by_alias=True, exclude_none=True))
    return n


def through_e2a(runs: list[list[AgentEvent]], *, wire_log: bool = False) -> int:
    n = 0
    for i, events in enumerate(runs):
        envelope = E2AEnvelope(request_id=f"req-{i}", session_id="s1", jsonrpc_id=i)
        encoder = E2AEventEncoder(ResponseSequencer(envelope))
        for event in events:
            for record in encoder.encode(event) + (encoder.close() if event is events[-1] else []):
                notification = e2a_response_to_acp_notification(record)
                n += len(notification["params"]) if notification is not None else 1
                if wire_log:
                    n += len(log_line(record))
    return n


def main() -> None:
    runs = [event_mix() for _ in range(RUNS)]
    n = sum(len(events) for events in runs)
    base = best_of(lambda: direct(runs))
    e2a = best_of(lambda: through_e2a(runs))
    logged = best_of(lambda: through_e2a(runs, wire_log=True))
    print(f"agent events per round: {n} ({RUNS} runs)")
    print(f"ACP updates built directly:    {n / base:14,.0f} events/s")
    print(f"through E2A (door path):       {n / e2a:14,.0f} events/s")
    print(f"through E2A + JSONL wire log:  {n / logged:14,.0f} events/s")
    print(
        f"per agent event: E2A path {e2a / n * 1e6:.1f} µs, with wire log {logged / n * 1e6:.1f} µs"
    )
    print(f"ratio E2A path / direct:       {e2a / base:14.2f}x the direct path's time")
    print(f"ratio E2A + wire log / direct: {logged / base:14.2f}x the direct path's time")


if __name__ == "__main__":
    main()
