"""Human-readable live output of an event stream (``trpc-bridge call``).

The answer text is written as it streams; reasoning is dimmed; each tool call is shown
with its arguments, each result, code and its output on lines of their own. What to
print comes from :class:`~trpc_bridge.message_aggregate.MessageAggregator` updates, so a complete
response that repeats its deltas (Go's re-sent final text) is never printed twice.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from trpc_bridge.events import AgentEvent
from trpc_bridge.message_aggregate import MessageAggregator


class ConsoleView:
    def __init__(self, write: Callable[[str], None], *, color: bool = True) -> None:
        self._write = write
        self._color = color
        self.aggregator = MessageAggregator()
        self._at_line_start = True
        self._streaming = ""  # "text" | "reasoning" while a stream of either is open

    def _style(self, text: str, **style: bool | str) -> str:
        return typer.style(text, **style) if self._color else text  # type: ignore[arg-type]

    def _stream(self, kind: str, text: str, **style: bool | str) -> None:
        if self._streaming != kind and not self._at_line_start:
            self._newline()
        self._streaming = kind
        self._write(self._style(text, **style))
        self._at_line_start = text.endswith("\n")

    def _newline(self) -> None:
        self._write("\n")
        self._at_line_start = True

    def _line(self, text: str, **style: bool | str) -> None:
        if not self._at_line_start:
            self._newline()
        self._streaming = ""
        self._write(self._style(text, **style) + "\n")
        self._at_line_start = True

    def show(self, event: AgentEvent) -> None:
        update = self.aggregator.add(event)
        if update.reasoning:
            self._stream("reasoning", update.reasoning, dim=True)
        if update.text_replaced:
            self._line("(complete answer)", dim=True)
        if update.text:
            self._stream("text", update.text)
        for call in update.tool_calls:
            self._line(f"→ {call.function.name}({call.function.arguments})", fg="cyan")
        for result in update.tool_results:
            self._line(f"← {result.name or result.call_id}: {result.content}", fg="green")
        for code in update.code:
            self._line(f"code:\n{code.rstrip()}", fg="yellow")
        for output in update.code_results:
            self._line(f"output:\n{output.rstrip()}", fg="yellow")

    def close(self) -> None:
        if not self._at_line_start:
            self._newline()
