"""AG-UI 1.0 from any :class:`~trpc_bridge.events.AgentEvent` stream, aggregated by
``llm_response_id`` (trpc-agent-go's ``server/agui/translator``, ``docs/specs/trpc-interaction.md``
§5).

One :class:`AguiTranslator` per run turns agent events into ``ag_ui.core`` events:

========================================  ============================================
agent event                               AG-UI events
========================================  ============================================
(first event / :meth:`start`)             ``RUN_STARTED`` with ``protocolVersion``
text delta, object ``chat.completion      ``TEXT_MESSAGE_START`` (on the id's first
.chunk``                                  delta), ``TEXT_MESSAGE_CONTENT``
object ``chat.completion`` (the LLM's     ``TEXT_MESSAGE_END`` when that id is open;
complete response, partial or not)        ``START``/``CONTENT``/``END`` with its full
                                          text when the id never streamed; nothing
                                          when the id already streamed and is closed
reasoning delta / final reasoning         ``REASONING_START``, ``REASONING_MESSAGE_
                                          START/CONTENT/END``, ``REASONING_END``, id
                                          ``reasoning-<llm_response_id>``
tool calls (``choices[].message``)        per new call id ``TOOL_CALL_START``
                                          (``parentMessageId`` = response id),
                                          ``TOOL_CALL_ARGS`` (raw argument string),
                                          ``TOOL_CALL_END``
tool result (``tool.response``)          ``TOOL_CALL_RESULT`` with message id
                                          ``result-<toolCallId>`` (made unique)
code (tag ``code_execution_code``)        ``ACTIVITY_SNAPSHOT`` type ``code_execution``
                                          content ``{"code": …}``
code result (``code_execution_result``)   ``ACTIVITY_DELTA`` adding ``/output`` to the
                                          oldest code activity still without output
                                          (or a snapshot ``{"output": …}`` if none)
``state_delta``                           ``STATE_DELTA`` JSON Patch: ``add /<key>``
                                          with the value parsed as JSON, the UTF-8
                                          text when it is not JSON, base64 when it is
                                          not UTF-8; ``remove`` for a deleted key the
                                          client is known to hold
``error`` set (any event, as Go does)     open streams ended, ``RUN_ERROR``
``runner.completion`` / :meth:`finish`    open streams ended, ``RUN_FINISHED``
:meth:`cancel`                            open streams ended, ``RUN_FINISHED`` with
                                          outcome ``cancelled``
========================================  ============================================

Text and reasoning are serial, like trpc's ``WithConcurrentMessageStreamsEnabled(false)``:
at most one text or reasoning message is open; another id taking over, a tool call, code
execution, the id's ``chat.completion`` event or the end of the run closes it. Code
execution is rendered as an ACTIVITY (not CUSTOM) because ``@ag-ui/client`` materialises
activities as messages in the conversation, so a UI shows code and output in place.

Where this deliberately differs from trpc-agent-go's default translator:

* text with an empty response id (Go drops it) gets a generated ``msg-…`` id, shared by
  consecutive id-less text until another id or a tool call takes over;
* reasoning is always translated (Go: only with ``WithReasoningContentEnabled``);
* deltas for an id whose message was already closed reopen that same message id (Go's
  concurrent mode drops them): ``@ag-ui/client`` appends them to the same message, so no
  streamed text is lost and text per message id is the concatenation of its deltas;
* a tool call without id gets a generated ``call-…`` id, and a result without tool id
  answers the oldest such call (Go drops the result); a tool result with empty content
  still yields ``TOOL_CALL_RESULT`` (Go emits none, leaving the call pending);
* tool-result message ids are ``result-<toolCallId>`` rather than the event's uuid, so a
  run's output is deterministic; partial (streaming) tool results are not translated;
* code execution and state deltas are translated (Go's default ignores them).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable
from typing import Any, Literal

from ag_ui.core import (
    PROTOCOL_VERSION,
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    BaseEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from trpc_bridge import names
from trpc_bridge.events import (
    AgentEvent,
    Choice,
    ObjectType,
    Role,
    Tag,
    ToolCall,
)

#: ``activityType`` of the activity messages that show code execution.
CODE_ACTIVITY_TYPE = "code_execution"

#: Makes a fresh id from a prefix (``msg``, ``call``, ``code``); tests pass a counter.
IdFactory = Callable[[str], str]

_TEXT_ROLES = ("developer", "system", "assistant", "user")
_TEXT_OBJECTS = (ObjectType.CHUNK, ObjectType.COMPLETION)

_Kind = Literal["text", "reasoning"]


def reasoning_message_id(message_id: str) -> str:
    """Reasoning needs its own id: sharing the text's makes ``@ag-ui/client`` drop text."""
    return f"reasoning-{message_id}"


class AguiTranslator:
    """Translates one run's agent events into AG-UI events; see the module docstring.

    Every method returns the AG-UI events to send, in order. After the run has ended
    (``RUN_FINISHED`` or ``RUN_ERROR`` returned) every method returns ``[]``; check
    :attr:`ended` to stop feeding events.
    """

    def __init__(
        self,
        thread_id: str,
        run_id: str,
        *,
        new_id: IdFactory = names.new_id,
        state_keys: Iterable[str] = (),
    ) -> None:
        self._thread_id = thread_id
        self._run_id = run_id
        self._new_id = new_id
        self._started = False
        self._ended = False
        #: The one open text or reasoning message.
        self._open: tuple[_Kind, str] | None = None
        #: Text / reasoning message ids ever opened: a completion for these adds nothing.
        self._text_seen: set[str] = set()
        self._reasoning_seen: set[str] = set()
        #: The generated message id standing in for an empty response id.
        self._anonymous_id: str | None = None
        self._tool_call_ids: set[str] = set()
        #: Generated ids of calls that came without one, oldest first, for their results.
        self._unnamed_calls: list[str] = []
        #: Every message id handed out for results and activities, to keep them unique.
        self._minted_ids: set[str] = set()
        #: Code activities still waiting for their output, oldest first.
        self._code_waiting: list[str] = []
        #: State keys the client holds (from the run input or added during this run).
        self._state_keys = set(state_keys)

    @property
    def ended(self) -> bool:
        return self._ended

    # --- run lifecycle -----------------------------------------------------------------

    def start(self) -> list[BaseEvent]:
        if self._started:
            return []
        self._started = True
        return [
            RunStartedEvent(
                thread_id=self._thread_id,
                run_id=self._run_id,
                protocol_version=PROTOCOL_VERSION,
            )
        ]

    def finish(self) -> list[BaseEvent]:
        """End the run successfully (idempotent)."""
        return self._end(
            RunFinishedEvent(
                thread_id=self._thread_id,
                run_id=self._run_id,
                outcome=RunFinishedSuccessOutcome(),
            )
        )

    def cancel(self) -> list[BaseEvent]:
        """End the run as cancelled, closing everything still open (idempotent)."""
        return self._end(
            RunFinishedEvent(
                thread_id=self._thread_id,
                run_id=self._run_id,
                outcome=RunFinishedCancelledOutcome(),
            )
        )

    def fail(self, message: str, code: str | None = None) -> list[BaseEvent]:
        """End the run with ``RUN_ERROR`` after closing everything still open."""
        return self._end(RunErrorEvent(message=message, code=code))

    def _end(self, terminal: BaseEvent) -> list[BaseEvent]:
        if self._ended:
            return []
        out = self.start()
        out += self._close_open()
        out.append(terminal)
        self._ended = True
        return out

    # --- one agent event ---------------------------------------------------------------

    def translate(self, event: AgentEvent) -> list[BaseEvent]:
        if self._ended:
            return []
        out = self.start()
        if event.error is not None:
            message = event.error.message or event.error.type
            return out + self.fail(message, event.error.code or event.error.type or None)
        if event.object in _TEXT_OBJECTS:
            out += self._reasoning(event)
            out += self._text(event)
        out += self._tool_calls(event)
        out += self._tool_results(event)
        if event.object == ObjectType.CODE_EXECUTION:
            out += self._code(event)
        out += self._state_delta(event)
        if event.is_runner_completion():
            out += self.finish()
        return out

    def _message_id(self, event: AgentEvent) -> str:
        """The AG-UI message id of the event's LLM response (generated for an empty id)."""
        if event.id:
            self._anonymous_id = None
            return event.id
        if self._anonymous_id is None:
            self._anonymous_id = self._new_id("msg")
        return self._anonymous_id

    # --- text and reasoning ------------------------------------------------------------

    def _text(self, event: AgentEvent) -> list[BaseEvent]:
        choice = _first(event)
        if choice is None:
            return []
        if event.object == ObjectType.CHUNK:
            delta = choice.delta.content
            if not delta:
                return []
            message_id = self._message_id(event)
            role = choice.delta.role if choice.delta.role in _TEXT_ROLES else Role.ASSISTANT
            out = self._open_stream("text", message_id, role)
            out.append(TextMessageContentEvent(message_id=message_id, delta=delta))
            return out
        full = choice.message.content or choice.delta.content
        if not full and self._open is None:
            return []
        message_id = self._message_id(event)
        if self._open == ("text", message_id):
            return self._close_open()
        if not full or message_id in self._text_seen:
            # The Go v0 server re-sends the final full text, and its client's final event
            # repeats it again: what was streamed under this id is already shown.
            return []
        role = choice.message.role if choice.message.role in _TEXT_ROLES else Role.ASSISTANT
        out = self._open_stream("text", message_id, role)
        out.append(TextMessageContentEvent(message_id=message_id, delta=full))
        return out + self._close_open()

    def _reasoning(self, event: AgentEvent) -> list[BaseEvent]:
        choice = _first(event)
        if choice is None:
            return []
        if event.object == ObjectType.CHUNK:
            delta = choice.delta.reasoning_content
            if not delta:
                return []
            message_id = reasoning_message_id(self._message_id(event))
            out = self._open_stream("reasoning", message_id)
            out.append(ReasoningMessageContentEvent(message_id=message_id, delta=delta))
            return out
        full = choice.message.reasoning_content or choice.delta.reasoning_content
        if not full and self._open is None:
            return []
        message_id = reasoning_message_id(self._message_id(event))
        if self._open == ("reasoning", message_id):
            return self._close_open()
        if not full or message_id in self._reasoning_seen:
            return []
        out = self._open_stream("reasoning", message_id)
        out.append(ReasoningMessageContentEvent(message_id=message_id, delta=full))
        return out + self._close_open()

    def _open_stream(
        self, kind: _Kind, message_id: str, role: str = Role.ASSISTANT
    ) -> list[BaseEvent]:
        if self._open == (kind, message_id):
            return []
        out = self._close_open()
        if kind == "text":
            self._text_seen.add(message_id)
            out.append(TextMessageStartEvent(message_id=message_id, role=role))
        else:
            self._reasoning_seen.add(message_id)
            out.append(ReasoningStartEvent(message_id=message_id))
            out.append(ReasoningMessageStartEvent(message_id=message_id))
        self._open = (kind, message_id)
        return out

    def _close_open(self) -> list[BaseEvent]:
        if self._open is None:
            return []
        kind, message_id = self._open
        self._open = None
        if kind == "text":
            return [TextMessageEndEvent(message_id=message_id)]
        return [
            ReasoningMessageEndEvent(message_id=message_id),
            ReasoningEndEvent(message_id=message_id),
        ]

    # --- tools -------------------------------------------------------------------------

    def _tool_calls(self, event: AgentEvent) -> list[BaseEvent]:
        calls = [call for choice in event.choices for call in _calls_of(choice, event)]
        if not calls:
            return []
        parent = self._message_id(event)
        out = self._close_open()
        for call in calls:
            call_id = call.id
            if not call_id:
                call_id = self._new_id("call")
                self._unnamed_calls.append(call_id)
            if call_id in self._tool_call_ids:
                continue  # replayed call (e.g. a re-sent response): start each id once
            self._tool_call_ids.add(call_id)
            out.append(
                ToolCallStartEvent(
                    tool_call_id=call_id,
                    tool_call_name=call.function.name,
                    parent_message_id=parent,
                )
            )
            if call.function.arguments:
                out.append(ToolCallArgsEvent(tool_call_id=call_id, delta=call.function.arguments))
            out.append(ToolCallEndEvent(tool_call_id=call_id))
        # Text after a tool call belongs to the next LLM response.
        self._anonymous_id = None
        return out

    def _tool_results(self, event: AgentEvent) -> list[BaseEvent]:
        if event.is_partial:
            return []
        out: list[BaseEvent] = []
        for result in event.tool_results:
            call_id = result.tool_id or self._unnamed_call_id()
            out.append(
                ToolCallResultEvent(
                    message_id=self._mint(f"result-{call_id}"),
                    tool_call_id=call_id,
                    content=result.content,
                    role="tool",
                )
            )
        return out

    def _unnamed_call_id(self) -> str:
        """A result without tool id answers the oldest call that had no id either."""
        return self._unnamed_calls.pop(0) if self._unnamed_calls else self._new_id("call")

    def _mint(self, candidate: str) -> str:
        message_id, n = candidate, 1
        while message_id in self._minted_ids:
            n += 1
            message_id = f"{candidate}-{n}"
        self._minted_ids.add(message_id)
        return message_id

    # --- code execution ----------------------------------------------------------------

    def _code(self, event: AgentEvent) -> list[BaseEvent]:
        choice = _first(event)
        text = (choice.message.content or choice.delta.content) if choice else ""
        if event.has_tag(Tag.CODE):
            message_id = self._mint(self._new_id("code"))
            self._code_waiting.append(message_id)
            return [
                *self._close_open(),
                ActivitySnapshotEvent(
                    message_id=message_id,
                    activity_type=CODE_ACTIVITY_TYPE,
                    content={"code": text},
                ),
            ]
        if not event.has_tag(Tag.CODE_RESULT):
            return []
        out = self._close_open()
        if self._code_waiting:
            out.append(
                ActivityDeltaEvent(
                    message_id=self._code_waiting.pop(0),
                    activity_type=CODE_ACTIVITY_TYPE,
                    patch=[{"op": "add", "path": "/output", "value": text}],
                )
            )
        else:
            out.append(
                ActivitySnapshotEvent(
                    message_id=self._mint(self._new_id("code")),
                    activity_type=CODE_ACTIVITY_TYPE,
                    content={"output": text},
                )
            )
        return out

    # --- state -------------------------------------------------------------------------

    def _state_delta(self, event: AgentEvent) -> list[BaseEvent]:
        ops: list[dict[str, Any]] = []
        for key, raw in event.state_delta.items():
            path = "/" + key.replace("~", "~0").replace("/", "~1")
            if raw is None:
                # JSON Patch ``remove`` fails (and takes the whole patch with it) when the
                # key is absent, so only keys the client holds are removed.
                if key in self._state_keys:
                    self._state_keys.discard(key)
                    ops.append({"op": "remove", "path": path})
            else:
                self._state_keys.add(key)
                ops.append({"op": "add", "path": path, "value": state_value(raw)})
        return [StateDeltaEvent(delta=ops)] if ops else []


def state_value(raw: bytes) -> Any:
    """A trpc state value as JSON: parsed when it is JSON, else its text, else base64."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return base64.b64encode(raw).decode("ascii")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return text


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _first(event: AgentEvent) -> Choice | None:
    return event.choices[0] if event.choices else None


def _calls_of(choice: Choice, event: AgentEvent) -> list[ToolCall]:
    """Complete tool calls only: streamed tool-call fragments (partial deltas) are skipped,
    as trpc's default translator does."""
    if choice.message.tool_calls:
        return choice.message.tool_calls
    return [] if event.is_partial else choice.delta.tool_calls
