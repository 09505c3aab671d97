"""Fold an event stream into complete messages, one per LLM response id.

trpc-agent-go's client copies ``llm_response_id`` into each event's id but does not group
by it; its AG-UI translator does. This is that grouping, for any consumer (the CLI, the
AG-UI endpoint): text and reasoning deltas are concatenated, tool calls collected with
their full arguments, tool results, code and code output gathered, errors kept.

The rule it relies on (the decoder guarantees it, and trpc agents behave so): a
non-partial event's ``message`` is the *complete* response for its id, so its text
replaces the deltas seen before it instead of being appended to them.

:meth:`MessageAggregator.add` also says what an event made newly visible (:class:`Update`), so
a live display can print just that and never show a text twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from trpc_bridge.events import (
    AgentEvent,
    ChatMessage,
    ContentPart,
    ResponseError,
    Role,
    Tag,
    ToolCall,
)


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    name: str
    content: str


@dataclass
class AggregatedMessage:
    """Everything one response id (or one id-less event) carried."""

    id: str
    role: str = Role.ASSISTANT
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    code_results: list[str] = field(default_factory=list)
    content_parts: list[ContentPart] = field(default_factory=list)
    error: ResponseError | None = None
    #: A non-partial event for this id arrived: the text is final.
    complete: bool = False


@dataclass
class Update:
    """What one event added to its message, for live display."""

    message: AggregatedMessage
    text: str = ""
    reasoning: str = ""
    #: The complete text differs from what the deltas showed: show ``message.text`` anew.
    text_replaced: bool = False
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    code_results: list[str] = field(default_factory=list)
    error: ResponseError | None = None


def _extend(update: Update, message: AggregatedMessage, text: str, reasoning: str) -> None:
    message.text += text
    message.reasoning += reasoning
    update.text += text
    update.reasoning += reasoning


def _complete_text(current: str, final: str) -> tuple[str, bool]:
    """(newly visible suffix, replaced?) when the complete text ``final`` arrives."""
    if final.startswith(current):
        return final[len(current) :], False
    return final, True


class MessageAggregator:
    """Folds events into :class:`AggregatedMessage` s in first-seen order."""

    def __init__(self) -> None:
        self._messages: dict[str, AggregatedMessage] = {}

    @property
    def messages(self) -> list[AggregatedMessage]:
        return list(self._messages.values())

    @property
    def text(self) -> str:
        """The answer: the assistant text of all messages, in order."""
        return "".join(m.text for m in self._messages.values() if m.role == Role.ASSISTANT)

    @property
    def error(self) -> ResponseError | None:
        errors = [m.error for m in self._messages.values() if m.error is not None]
        return errors[-1] if errors else None

    def extend(self, events: Iterable[AgentEvent]) -> MessageAggregator:
        for event in events:
            self.add(event)
        return self

    def add(self, event: AgentEvent) -> Update:
        # Id-less events (tool results, code) are separate messages: never merge them.
        key = event.id or f"event:{event.event_id}"
        message = self._messages.get(key)
        if message is None:
            message = self._messages[key] = AggregatedMessage(id=event.id)
        update = Update(message=message)
        if event.error is not None:
            message.error = update.error = event.error
        code_tag = event.has_tag(Tag.CODE_RESULT) or event.has_tag(Tag.CODE)
        for choice in event.choices:
            for part, partial in ((choice.delta, True), (choice.message, False)):
                if part.is_empty():
                    continue
                if code_tag:
                    self._code(update, event, part)
                elif part.is_tool_result:
                    result = ToolResult(part.tool_id, part.tool_name, part.content)
                    message.tool_results.append(result)
                    update.tool_results.append(result)
                else:
                    self._assistant(update, part, partial=partial and event.is_partial)
        if not event.is_partial:
            message.complete = True
        return update

    def _code(self, update: Update, event: AgentEvent, part: ChatMessage) -> None:
        target, seen = (
            (update.message.code_results, update.code_results)
            if event.has_tag(Tag.CODE_RESULT)
            else (update.message.code, update.code)
        )
        target.append(part.content)
        seen.append(part.content)

    def _assistant(self, update: Update, part: ChatMessage, *, partial: bool) -> None:
        message = update.message
        if part.role:
            message.role = part.role
        message.content_parts.extend(part.content_parts)
        if partial:
            _extend(update, message, part.content, part.reasoning_content)
            self._merge_call_deltas(update, part.tool_calls)
            return
        if part.content:
            update.text, update.text_replaced = _complete_text(message.text, part.content)
            message.text = part.content
        if part.reasoning_content:
            update.reasoning, _ = _complete_text(message.reasoning, part.reasoning_content)
            message.reasoning = part.reasoning_content
        for call in part.tool_calls:
            known = next((c for c in message.tool_calls if c.id and c.id == call.id), None)
            if known is None:
                message.tool_calls.append(call.model_copy(deep=True))
                update.tool_calls.append(call)
            else:  # the complete call replaces its streamed pieces
                known.function = call.function.model_copy()

    def _merge_call_deltas(self, update: Update, calls: list[ToolCall]) -> None:
        """Streamed tool-call pieces (trpc v1 sends partial ``args``): join by call id."""
        for call in calls:
            known = next((c for c in update.message.tool_calls if c.id == call.id), None)
            if known is None:
                update.message.tool_calls.append(call.model_copy(deep=True))
                update.tool_calls.append(call)
            else:
                known.function.name = known.function.name or call.function.name
                known.function.arguments += call.function.arguments


def aggregate(events: Iterable[AgentEvent]) -> list[AggregatedMessage]:
    """The complete messages of a finished event stream."""
    return MessageAggregator().extend(events).messages
