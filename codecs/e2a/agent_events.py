"""Agent events ⇄ E2A responses: ``e2a.chunk`` (``delta_kind`` text / reasoning / tool /
custom), ``e2a.complete`` and ``e2a.error`` (docs/specs/e2a.md §12.5).

:class:`E2AEventEncoder` turns one run's :class:`~trpc_bridge.events.AgentEvent` stream
into one request's records through a :class:`ResponseSequencer`, so the §12.3 rules hold
by construction. Chunks carry the LLM response id as ``message_id``. A chunk is a *delta*:
when trpc's complete (non-partial) response follows its streamed chunks, only what the
chunks did not already say is sent, so no consumer shows a text twice. The final record
is ``e2a.complete`` with ``result.content`` = the last answer text (docs/specs/e2a.md §12.8), or
``e2a.error`` for a terminal error (code = the trpc error type; ``stop_agent_error`` and a
cancelled run use code ``cancelled``).

:func:`e2a_response_to_agent_event` reads records back into events; a run encoded and
decoded folds (``trpc_bridge.message_aggregate``) into the same messages.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from trpc_bridge.codecs.e2a.constants import (
    CUSTOM_CODE,
    CUSTOM_CODE_RESULT,
    CUSTOM_ERROR,
    CUSTOM_STATE,
    DELTA_CUSTOM,
    DELTA_REASONING,
    DELTA_TEXT,
    DELTA_TOOL,
    ERROR_CANCELLED,
    KIND_CHUNK,
    KIND_ERROR,
    TOOL_CALL,
    TOOL_RESULT,
)
from trpc_bridge.codecs.e2a.models import E2AResponse
from trpc_bridge.codecs.e2a.request import decode_base64
from trpc_bridge.codecs.e2a.rules import ResponseSequencer
from trpc_bridge.events import (
    AgentEvent,
    ChatMessage,
    ErrorType,
    ObjectType,
    ResponseError,
    Role,
    Tag,
)


class E2AEventEncoder:
    """One run's events → one request's E2A records. One encoder per run."""

    def __init__(self, sequencer: ResponseSequencer) -> None:
        self._seq = sequencer
        # Text and reasoning sent so far per (delta kind, response id): pieces, joined
        # only when a complete response arrives (joining per delta would be quadratic).
        self._sent: dict[tuple[str, str], list[str]] = {}
        self._answer_id: str | None = None
        self._codes = 0
        self._open_code: str | None = None

    @property
    def finished(self) -> bool:
        return self._seq.finished

    def encode(self, event: AgentEvent) -> list[E2AResponse]:
        """The records for one event (none after the final record: a run that goes on
        after its terminal error has nothing more to say)."""
        if self.finished:
            return []
        if event.is_terminal_error() and event.error is not None:
            return [self._error(event.error)]
        out: list[E2AResponse] = []
        for choice in event.choices:
            if event.is_partial:
                delta = choice.delta
                out += self._stream(DELTA_REASONING, event.id, delta.reasoning_content)
                out += self._stream(DELTA_TEXT, event.id, delta.content)
            else:
                out += self._complete_message(event, choice.message)
        if event.error is not None:
            error = {
                "type": CUSTOM_ERROR,
                "error_type": event.error.type,
                "message": event.error.message,
            }
            out.append(self._seq.chunk(DELTA_CUSTOM, error, message_id=event.id or None))
        if event.state_delta:
            state = {
                k: None if v is None else base64.b64encode(v).decode()
                for k, v in event.state_delta.items()
            }
            out.append(self._seq.chunk(DELTA_CUSTOM, {"type": CUSTOM_STATE, "state_delta": state}))
        return out

    def close(self) -> list[E2AResponse]:
        """The final ``e2a.complete`` of a run that ended normally (none if already final)."""
        if self.finished:
            return []
        answer = (
            "".join(self._sent.get((DELTA_TEXT, self._answer_id), []))
            if self._answer_id is not None
            else ""
        )
        return [self._seq.complete({"content": answer})]

    def cancel(self, message: str = "cancelled by the caller") -> list[E2AResponse]:
        """The final record of a run the caller cancelled (none if already final)."""
        if self.finished:
            return []
        return [self._seq.error(ERROR_CANCELLED, message)]

    def _error(self, error: ResponseError) -> E2AResponse:
        code = ERROR_CANCELLED if error.type == ErrorType.STOP_AGENT else error.type
        details: dict[str, Any] = {"type": error.type}
        if error.code is not None:
            details["code"] = error.code
        if error.param is not None:
            details["param"] = error.param
        return self._seq.error(code, error.message, details)

    def _stream(self, kind: str, response_id: str, text: str) -> list[E2AResponse]:
        if not text:
            return []
        self._sent.setdefault((kind, response_id), []).append(text)
        if kind == DELTA_TEXT:
            self._answer_id = response_id
        return [self._seq.chunk(kind, text, message_id=response_id or None)]

    def _rest(self, kind: str, response_id: str, full: str) -> list[E2AResponse]:
        """What a complete response adds to the chunks of its id that were already sent."""
        if not full:
            return []
        pieces = self._sent.get((kind, response_id))
        sent = "".join(pieces) if pieces else ""
        self._sent[(kind, response_id)] = [full]
        if kind == DELTA_TEXT:
            self._answer_id = response_id
        # A complete text that does not extend its chunks (a model that rewrote itself) is
        # sent whole: repeating beats losing it.
        rest = full[len(sent) :] if full.startswith(sent) else full
        return [self._seq.chunk(kind, rest, message_id=response_id or None)] if rest else []

    def _complete_message(self, event: AgentEvent, message: ChatMessage) -> list[E2AResponse]:
        mid = event.id or None
        if event.object == ObjectType.TOOL_RESPONSE or message.role == Role.TOOL:
            result = {
                "type": TOOL_RESULT,
                "id": message.tool_id,
                "name": message.tool_name,
                "content": message.content,
            }
            return [self._seq.chunk(DELTA_TOOL, result, message_id=mid)]
        if event.object == ObjectType.CODE_EXECUTION:
            return [self._code(event, message.content)]
        out = self._rest(DELTA_REASONING, event.id, message.reasoning_content)
        out += self._rest(DELTA_TEXT, event.id, message.content)
        for call in message.tool_calls:
            delta = {
                "type": TOOL_CALL,
                "id": call.id,
                "name": call.function.name,
                "arguments": call.function.arguments,
            }
            out.append(self._seq.chunk(DELTA_TOOL, delta, message_id=mid))
        return out

    def _code(self, event: AgentEvent, content: str) -> E2AResponse:
        # Code and its output carry no common id in trpc; pair each output with the code
        # before it, so an ACP client sees one tool call that runs and then completes.
        if event.has_tag(Tag.CODE_RESULT):
            code_id = self._open_code or self._new_code_id()
            self._open_code = None
            delta: dict[str, Any] = {"type": CUSTOM_CODE_RESULT, "id": code_id, "output": content}
        else:
            self._open_code = self._new_code_id()
            delta = {"type": CUSTOM_CODE, "id": self._open_code, "code": content}
        return self._seq.chunk(DELTA_CUSTOM, delta, message_id=event.id or None)

    def _new_code_id(self) -> str:
        self._codes += 1
        return f"code-{self._codes}"


def e2a_response_to_agent_event(response: E2AResponse) -> AgentEvent | None:
    """The agent event a record stands for; ``None`` for records that are none (the
    completion, other protocols' kinds, custom chunks of unknown type)."""
    body, rid = response.body, response.message_id or ""
    if response.response_kind == KIND_ERROR:
        details = body.get("details")
        info: Mapping[str, Any] = details if isinstance(details, Mapping) else {}
        code = body.get("code")
        default = ErrorType.STOP_AGENT if code == ERROR_CANCELLED else str(code)
        return AgentEvent.failure(
            str(body.get("message", "")),
            type=str(info.get("type") or default),
            code=_opt_str(info.get("code")),
            param=_opt_str(info.get("param")),
        )
    if response.response_kind != KIND_CHUNK:
        return None
    kind, delta = body.get("delta_kind"), body.get("delta")
    if kind in (DELTA_TEXT, DELTA_REASONING):
        text = delta if isinstance(delta, str) else json.dumps(delta, ensure_ascii=False)
        maker = AgentEvent.text_delta if kind == DELTA_TEXT else AgentEvent.reasoning_delta
        return maker(text, rid)
    return _structured_event(delta, rid) if isinstance(delta, Mapping) else None


def _structured_event(delta: Mapping[str, Any], rid: str) -> AgentEvent | None:
    kind = delta.get("type")
    if kind == TOOL_CALL:
        args = delta.get("arguments")
        args = args if isinstance(args, str) else json.dumps(args)
        return AgentEvent.tool_call(
            str(delta.get("name", "")), args, call_id=str(delta.get("id", "")), response_id=rid
        )
    if kind == TOOL_RESULT:
        return AgentEvent.tool_result(
            str(delta.get("id", "")),
            str(delta.get("name", "")),
            str(delta.get("content", "")),
            response_id=rid,
        )
    if kind == CUSTOM_CODE:
        return AgentEvent.code(str(delta.get("code", "")), response_id=rid)
    if kind == CUSTOM_CODE_RESULT:
        return AgentEvent.code_result(str(delta.get("output", "")), response_id=rid)
    if kind == CUSTOM_ERROR:
        error = ResponseError(
            type=str(delta.get("error_type", "")), message=str(delta.get("message", ""))
        )
        return AgentEvent(id=rid, error=error)
    if kind == CUSTOM_STATE:
        state = delta.get("state_delta")
        if isinstance(state, Mapping):
            return AgentEvent.state(
                {
                    k: None if v is None else decode_base64(str(v), f"state_delta[{k!r}]")
                    for k, v in state.items()
                }
            )
    return None


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)
