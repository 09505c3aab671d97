"""Agent events → tfrs progress updates (``docs/specs/tfrs-progress.md`` §3).

One :class:`ProgressProducer` per turn (one send request): it owns the turn's ``seq``
counter, remembers which tool calls are open (so a tool result closes the right
``streamKey``, and the end of the turn closes the rest), and applies the size limits.
Each :class:`ProgressUpdate` becomes one ``working`` status update with one Part
(:func:`working_update`): at most one envelope per update.

Mapping: reasoning → ``thinking`` (each delta as it comes; a completion that repeats
streamed reasoning adds nothing); text → ``text``, but only progress text: the text of
an LLM response that ends in tool calls ("Let me check the weather."), sent once that
response completes. A response without tool calls is the answer, which the terminal
state carries (the final value comes from the terminal state only), so it makes no block. Each tool
call → ``tool_call`` ``running`` (``streamKey`` = the call id); its result → ``tool_call``
``done`` on the same ``streamKey``; an error event → ``error``. Code execution, state
deltas and graph events carry no progress block. ``tool_output_append`` is defined but
off, as in v1 (decision E3); ``tool_output=True`` turns it on for tool results.

Secrets never reach an envelope: the thinking and error text of the events it reads
were masked by the server's runner (:class:`~trpc_bridge.redaction.EventRedactor`), and
the progress text and tool output it takes from a response pass the redaction policy
(:mod:`trpc_bridge.redaction`) here, before the size limits cut them.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from a2a.types import Role, TaskState, TaskStatusUpdateEvent

from trpc_bridge.codecs.tfrs.envelope import METADATA_KEY, Envelope, Kind, Status
from trpc_bridge.codecs.tfrs.limits import HARD_LIMIT, SOFT_LIMIT, Dropped, split_text
from trpc_bridge.events import AgentEvent, ChatMessage, ObjectType
from trpc_bridge.events import Role as ChatRole
from trpc_bridge.redaction import Redaction, current


@dataclass(frozen=True)
class ProgressUpdate:
    """One working update: the text fallback, and the envelope unless the block was
    dropped for its size (then the text says so and no envelope travels)."""

    text: str
    envelope: Envelope | None


def fallback_text(envelope: Envelope) -> str:
    """What a caller that does not read envelopes sees."""
    if envelope.kind == "tool_call":
        verb = {"running": "calling tool", "done": "tool done:", "aborted": "tool aborted:"}
        return f"{verb[envelope.status]} {envelope.tool}"
    if envelope.kind == "error":
        return f"error: {envelope.text}"
    return envelope.text


def dropped_text(kind: str, size: int, hard: int) -> str:
    return f"[tfrs: {kind} block of {size} bytes dropped, over the {hard}-byte limit]"


@dataclass
class _OpenTool:
    key: str
    tool: str
    call_id: str


@dataclass
class ProgressProducer:
    """Turns one turn's agent events into progress updates."""

    #: First ``seq`` of the turn (decision E2: any start is valid).
    seq_start: int = 0
    #: Emit ``tool_output_append`` blocks for tool results (off in v1).
    tool_output: bool = False
    soft_limit: int = SOFT_LIMIT
    hard_limit: int = HARD_LIMIT
    #: What masks secrets in the blocks' text (the process's policy by default).
    redaction: Redaction = field(default_factory=current)
    _seq: int = field(init=False)
    _open: dict[str, _OpenTool] = field(init=False, default_factory=dict)
    #: Open calls without a call id, per tool name, oldest first.
    _anonymous: dict[str, deque[str]] = field(init=False, default_factory=dict)
    _anonymous_count: int = field(init=False, default=0)
    #: Response ids whose reasoning was streamed as deltas.
    _reasoned: set[str] = field(init=False, default_factory=set)
    #: Text deltas per response id, until the response shows whether it was progress.
    _pending_text: dict[str, list[str]] = field(init=False, default_factory=dict)
    finished: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self._seq = self.seq_start

    # --- blocks -------------------------------------------------------------------

    def _block(
        self,
        kind: Kind,
        payload: dict[str, Any],
        *,
        status: Status = "running",
        stream_key: str | None = None,
    ) -> ProgressUpdate:
        envelope = Envelope(
            kind=kind, stream_key=stream_key, seq=self._seq, status=status, payload=payload
        )
        self._seq += 1
        return ProgressUpdate(fallback_text(envelope), envelope)

    def _text_blocks(
        self,
        kind: Kind,
        field_name: str,
        text: str,
        extra: dict[str, Any] | None = None,
        stream_key: str | None = None,
    ) -> Iterator[ProgressUpdate]:
        """One block per piece of ``text`` within the limits (none for ``""``); a dropped
        piece becomes a text-only update that says so (and uses no ``seq``)."""
        if not text:
            return
        for piece in split_text(text, soft=self.soft_limit, hard=self.hard_limit):
            if isinstance(piece, Dropped):
                yield ProgressUpdate(dropped_text(kind, piece.size, self.hard_limit), None)
            else:
                payload = {**(extra or {}), field_name: piece}
                yield self._block(kind, payload, stream_key=stream_key)

    def _tool_payload(self, tool: str, call_id: str) -> dict[str, Any]:
        return {"tool": tool, "tool_call_id": call_id} if call_id else {"tool": tool}

    # --- tools --------------------------------------------------------------------

    def _open_tool(self, tool: str, call_id: str) -> ProgressUpdate:
        if call_id:
            key = call_id
        else:  # no id to correlate: a key of our own; the next nameless result closes it
            self._anonymous_count += 1
            key = f"tool-{self._anonymous_count}"
            self._anonymous.setdefault(tool, deque()).append(key)
        self._open[key] = _OpenTool(key, tool, call_id)
        return self._block("tool_call", self._tool_payload(tool, call_id), stream_key=key)

    def _result_key(self, tool: str, call_id: str) -> str | None:
        if call_id:
            return call_id
        waiting = self._anonymous.get(tool)
        return waiting.popleft() if waiting else None

    def _close_tool(self, message: ChatMessage) -> Iterator[ProgressUpdate]:
        tool, call_id = message.tool_name, message.tool_id
        key = self._result_key(tool, call_id)
        if key is None or key not in self._open:  # a result for a call we never saw
            yield self._open_tool(tool, call_id)
            key = self._result_key(tool, call_id) or call_id
        opened = self._open.pop(key)
        if self.tool_output and message.content:
            extra = self._tool_payload(opened.tool, opened.call_id)
            chunk = self.redaction.text(message.content)
            yield from self._text_blocks(
                "tool_output_append", "chunk", chunk, extra, stream_key=key
            )
        yield self._block(
            "tool_call",
            self._tool_payload(opened.tool, opened.call_id),
            status="done",
            stream_key=key,
        )

    def _end_open_tools(self, status: Status) -> list[ProgressUpdate]:
        updates = [
            self._block(
                "tool_call",
                self._tool_payload(tool.tool, tool.call_id),
                status=status,
                stream_key=tool.key,
            )
            for tool in self._open.values()
        ]
        self._open.clear()
        self._anonymous.clear()
        self._pending_text.clear()  # responses that never called tools: the answer
        return updates

    # --- events -------------------------------------------------------------------

    def _reasoning(
        self, event: AgentEvent, message: ChatMessage, partial: bool
    ) -> Iterator[ProgressUpdate]:
        if not message.reasoning_content:
            return
        if partial:
            self._reasoned.add(event.id)
        elif event.id in self._reasoned:
            return  # the completion repeats what its deltas already carried
        yield from self._text_blocks("thinking", "text", message.reasoning_content)

    def _progress_text(self, event: AgentEvent, message: ChatMessage) -> Iterator[ProgressUpdate]:
        """A completed response: its text is progress if it goes on to call tools."""
        streamed = "".join(self._pending_text.pop(event.id, []))
        if message.tool_calls:
            # trpc's server drops the text next to tool calls; its deltas still had it.
            text = self.redaction.text(message.content or streamed)
            yield from self._text_blocks("text", "text", text)

    def updates(self, event: AgentEvent) -> list[ProgressUpdate]:
        """The progress updates one agent event makes (often none)."""
        if self.finished or event.is_runner_completion():
            return []
        if event.error is not None:
            return self._error(event)
        if event.object == ObjectType.CODE_EXECUTION or event.object.startswith(
            ObjectType.GRAPH_PREFIX
        ):
            return []
        out: list[ProgressUpdate] = []
        for choice in event.choices:
            out.extend(self._reasoning(event, choice.delta, partial=True))
            if choice.delta.content:
                self._pending_text.setdefault(event.id, []).append(choice.delta.content)
            message = choice.message
            if message.role == ChatRole.TOOL or message.tool_id:
                out.extend(self._close_tool(message))
                continue
            out.extend(self._reasoning(event, message, partial=event.is_partial))
            if not event.is_partial:
                out.extend(self._progress_text(event, message))
            for call in message.tool_calls:
                out.append(self._open_tool(call.function.name, call.id))
        return out

    def _error(self, event: AgentEvent) -> list[ProgressUpdate]:
        assert event.error is not None
        terminal = event.is_terminal_error()
        message = self.redaction.text(event.error.message or event.error.type)
        status: Status = "aborted" if terminal else "running"
        out: list[ProgressUpdate] = []
        for update in self._text_blocks("error", "message", message):
            if update.envelope is not None and terminal:
                update = ProgressUpdate(
                    update.text, update.envelope.model_copy(update={"status": status})
                )
            out.append(update)
        if terminal:
            out.extend(self.abort())
        return out

    def close(self) -> list[ProgressUpdate]:
        """The turn ended normally: tool calls still open are ``done`` (the end of
        the turn closes each tool call)."""
        if self.finished:
            return []
        self.finished = True
        return self._end_open_tools("done")

    def abort(self) -> list[ProgressUpdate]:
        """The turn failed or was canceled: tool calls still open are ``aborted``."""
        if self.finished:
            return []
        self.finished = True
        return self._end_open_tools("aborted")


# --- A2A ----------------------------------------------------------------------------


def working_update(
    update: ProgressUpdate, *, task_id: str, context_id: str
) -> TaskStatusUpdateEvent:
    """The ``working`` status update that carries one progress update."""
    frame = TaskStatusUpdateEvent(task_id=task_id, context_id=context_id)
    status = frame.status
    status.state = TaskState.TASK_STATE_WORKING
    status.timestamp.GetCurrentTime()
    message = status.message  # filled in place: no copies on this per-event path
    message.message_id = f"tfrs-{os.urandom(16).hex()}"
    message.role = Role.ROLE_AGENT
    message.task_id, message.context_id = task_id, context_id
    part = message.parts.add(text=update.text)
    if update.envelope is not None:
        part.metadata.fields[METADATA_KEY].string_value = update.envelope.to_json()
    return frame
