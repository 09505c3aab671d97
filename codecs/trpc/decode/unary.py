"""A unary result (a Message or a Task, either wire shape) → events, as trpc's
``ConvertToEvents`` reads it (``docs/specs/trpc-interaction.md`` §4.4, vector C11): one event per
agent history message, then one per artifact, the last one ``done``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trpc_bridge.codecs.a2a.frames import TaskFrame, WireMessage, read_result
from trpc_bridge.codecs.trpc.decode.parts import DataPartMapper
from trpc_bridge.codecs.trpc.decode.units import (
    EventFactory,
    Unit,
    has_text,
    inferred_object,
    message_unit,
    task_units,
    text_message,
    tool_call_message,
    update_units,
)
from trpc_bridge.events import AgentEvent, ChatMessage, Choice, Role


def _unary_event(factory: EventFactory, unit: Unit) -> AgentEvent:
    """``buildNonStreamingResponse``: all of a message's content in one event's choices."""
    error_event = factory.error_event(unit)
    if error_event is not None:
        return error_event
    content = unit.content
    choices: list[Choice] = []
    if content.tool_calls:
        choices.append(Choice(message=tool_call_message(content)))
    choices.extend(
        Choice(index=len(choices) + i, message=m) for i, m in enumerate(content.tool_responses)
    )
    shows_text = has_text(content) or content.code is not None or content.code_result is not None
    if not content.tool_calls and shows_text:
        choices.append(Choice(index=len(choices), message=text_message(unit.role, content)))
    if not choices:
        choices.append(Choice(message=ChatMessage(role=Role.ASSISTANT)))
    object_type = unit.meta.object_type or inferred_object(content)
    return factory.new(unit, object_type, choices)


def decode_result(
    result: Any,
    *,
    mappers: Sequence[DataPartMapper] = (),
    invocation_id: str = "",
    author: str = "",
) -> list[AgentEvent]:
    """Events of a unary result (a Message or a Task, either wire shape); the last one is
    ``done``. Raises :class:`CodecError` only if ``result`` is not an A2A result."""
    frame = read_result(result)
    factory = EventFactory(invocation_id, author)
    units: list[Unit] = []
    if isinstance(frame, WireMessage):
        units.append(message_unit(frame, mappers))
    elif isinstance(frame, TaskFrame):
        units.extend(task_units(frame, mappers))
    else:  # a lone update as a unary result: decode it like its message would be
        units.extend(update_units(frame, mappers))
    events: list[AgentEvent] = []
    for unit in units:
        event = _unary_event(factory, unit)
        events.append(event)
        if event.is_terminal_error():
            break
    if events:
        events[-1].done = True
    return events
