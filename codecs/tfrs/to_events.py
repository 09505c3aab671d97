"""tfrs progress → agent events: what a tfrs-speaking peer that is not a trpc agent did,
as reasoning and tool events, so that Go callers (through ``trpc-bridge proxy``) and
AG-UI front ends see it.

Feed it only new items (after :class:`~trpc_bridge.codecs.tfrs.merge.ProgressMerger`
dedupe). The terminal state stays the only source of the answer and of the run's
outcome, so nothing here is answer text or a terminal error:

- ``thinking`` and ``text`` → reasoning deltas (``text`` is progress prose, not the
  answer); consecutive ones share a response id until a tool event comes between;
- ``tool_call`` ``running`` → a tool call (tfrs carries no arguments: ``{}``);
  ``tool_output_append`` chunks are collected; ``done`` / ``aborted`` → that call's
  result (the chunks, or ``"aborted"``). A result whose start was lost is preceded by
  its call; a late ``running`` after the result is ignored;
- ``error`` → a reasoning delta ``error: …`` (an error block never decides the outcome).

Pseudo-envelopes give nothing unless ``plain_progress`` is set (the peer speaks tfrs, so
its plain working text is progress too): then they are reasoning like ``text`` blocks.
Otherwise plain working text keeps the content decoder's meaning.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trpc_bridge.codecs.tfrs.envelope import Envelope
from trpc_bridge.codecs.tfrs.merge import ProgressItem
from trpc_bridge.events import AgentEvent
from trpc_bridge.names import new_response_id

#: Arguments of a tool call seen through tfrs, which does not carry them.
NO_ARGUMENTS = "{}"
ABORTED_RESULT = "aborted"


@dataclass
class _Tool:
    call_id: str
    tool: str
    output: list[str] = field(default_factory=list)
    closed: bool = False


@dataclass
class ProgressEvents:
    """Turns one peer's progress items into agent events (state: open tool calls and
    the current reasoning response id)."""

    invocation_id: str = ""
    author: str = ""
    #: Pseudo-envelopes (plain working text, unusable envelopes) become reasoning.
    plain_progress: bool = False
    _tools: dict[str, _Tool] = field(default_factory=dict)
    _reasoning_id: str = ""

    def _stamp(self, event: AgentEvent) -> AgentEvent:
        event.invocation_id, event.author = self.invocation_id, self.author
        return event

    def events(self, item: ProgressItem) -> list[AgentEvent]:
        if item.pseudo and not self.plain_progress:
            return []
        envelope = item.envelope
        if envelope.kind in ("tool_call", "tool_output_append"):
            self._reasoning_id = ""
            return [self._stamp(e) for e in self._tool_events(envelope)]
        text = envelope.text
        if envelope.kind == "error":
            text = f"error: {text}"
        if not text:
            return []
        self._reasoning_id = self._reasoning_id or new_response_id()
        return [self._stamp(AgentEvent.reasoning_delta(text, self._reasoning_id))]

    def _tool_events(self, envelope: Envelope) -> list[AgentEvent]:
        key = envelope.stream_key or envelope.tool_call_id or envelope.tool
        out: list[AgentEvent] = []
        tool = self._tools.get(key)
        if tool is None:
            call_id = envelope.tool_call_id or envelope.stream_key or f"tfrs-{envelope.seq}"
            tool = self._tools[key] = _Tool(call_id, envelope.tool)
            out.append(
                AgentEvent.tool_call(
                    tool.tool, NO_ARGUMENTS, call_id=call_id, response_id=new_response_id()
                )
            )
        if tool.closed:
            return out
        if envelope.kind == "tool_output_append":
            tool.output.append(envelope.text)
        elif envelope.status != "running":
            tool.closed = True
            content = "".join(tool.output) if envelope.status == "done" else ABORTED_RESULT
            out.append(AgentEvent.tool_result(tool.call_id, tool.tool, content))
        return out
