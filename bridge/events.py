"""The internal event model: trpc-agent-go's ``event.Event`` / ``model.Response`` in Python.

A Python agent that yields these events looks, on the wire, exactly like a trpc-agent-go
agent. Field names follow the Go JSON tags (``id``, ``object``, ``is_partial``, ``done``,
``choices[].message|delta``, ``reasoning_content``, ``tool_calls``, ``tool_id``,
``tool_name``) so that ``event.model_dump(mode="json")`` reads like the Go peer's output.

The event models are plain slotted dataclasses: an agent builds one or more per streamed
delta, so building one must cost little (a pydantic model costs about five times as
much, most of a served frame). Constructors trust their typed arguments as any
dataclass does; data from outside comes in through pydantic, which validates it against
the same classes (:meth:`EventModel.model_validate`, ``extra`` keys refused, bytes as
base64 in JSON), and :meth:`EventModel.model_dump` / :meth:`EventModel.model_dump_json`
write them as pydantic writes models.

``AgentEvent.id`` is the LLM response id, i.e. the ``llm_response_id`` on the A2A wire and
the ``artifactId`` of streaming artifact updates. Tool results and code-execution events
normally have an empty id, exactly as trpc-agent-go produces them.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, SecretStr, TypeAdapter

from trpc_bridge.names import new_hex_id


class ObjectType:
    """``Response.Object`` values that trpc-agent-go puts on the wire as ``object_type``."""

    CHUNK = "chat.completion.chunk"
    COMPLETION = "chat.completion"
    TOOL_RESPONSE = "tool.response"
    CODE_EXECUTION = "postprocessing.code_execution"
    RUNNER_COMPLETION = "runner.completion"
    ERROR = "error"
    GRAPH_EXECUTION = "graph.execution"
    GRAPH_PREFIX = "graph."
    #: Not a trpc-agent-go object: the agent sets the A2A task state
    #: (:meth:`AgentEvent.task_status`). trpc has no such event; A2A agents need it to
    #: ask for input, reject a task, or finish a task with a status message.
    TASK_STATUS = "a2a.task_status"


class TaskStateName:
    """A2A task states an agent may set with :meth:`AgentEvent.task_status` (the 0.3
    wire names). ``working`` reports progress; every other one ends the run: the
    interrupted ones (input / auth required) leave the task open for a follow-up
    message with its ``taskId``."""

    WORKING: Final = "working"
    INPUT_REQUIRED: Final = "input-required"
    AUTH_REQUIRED: Final = "auth-required"
    COMPLETED: Final = "completed"
    REJECTED: Final = "rejected"


TaskStateLiteral = Literal[
    "", "working", "input-required", "auth-required", "completed", "rejected"
]


class Tag:
    """``Event.Tag`` values; several tags are joined with :data:`DELIMITER`."""

    DELIMITER = ";"
    CODE = "code_execution_code"
    CODE_RESULT = "code_execution_result"
    TRANSFER = "transfer"


class ErrorType:
    FLOW = "flow_error"  # remote failure states (trpc client)
    RUN = "run_error"  # transport / setup failures (trpc client)
    API = "api_error"
    STOP_AGENT = "stop_agent_error"  # mapped to the A2A state ``canceled``


class Role:
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


_MODEL_CONFIG = ConfigDict(
    extra="forbid",
    # bytes travel as base64 in JSON (state_delta values, inline file data).
    ser_json_bytes="base64",
    val_json_bytes="base64",
)


_adapters: dict[type[Any], TypeAdapter[Any]] = {}


def _adapter(model: type[Any]) -> TypeAdapter[Any]:
    adapter = _adapters.get(model)
    if adapter is None:
        adapter = _adapters[model] = TypeAdapter(model)
    return adapter


class EventModel:
    """Base of the event dataclasses: pydantic's model API, through a ``TypeAdapter``."""

    __slots__ = ()
    __pydantic_config__ = _MODEL_CONFIG

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        """``obj`` (a mapping, as JSON would give) validated into this class; raises
        pydantic's ``ValidationError``."""
        validated: Self = _adapter(cls).validate_python(obj)
        return validated

    @classmethod
    def model_validate_json(cls, data: str | bytes) -> Self:
        validated: Self = _adapter(cls).validate_json(data)
        return validated

    def model_dump(self, **options: Any) -> dict[str, Any]:
        """As ``BaseModel.model_dump`` (``mode``, ``exclude``, ``exclude_defaults``, …)."""
        dumped: dict[str, Any] = _adapter(type(self)).dump_python(self, **options)
        return dumped

    def model_dump_json(self, **options: Any) -> str:
        return _adapter(type(self)).dump_json(self, **options).decode()

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy (nested values shared unless ``deep``), with ``update`` applied."""
        copied = copy.deepcopy(self) if deep else copy.copy(self)
        for name, value in (update or {}).items():
            setattr(copied, name, value)
        return copied


@dataclass(slots=True, kw_only=True)
class FunctionCall(EventModel):
    name: str = ""
    #: The arguments exactly as the model produced them: a JSON string, never parsed.
    arguments: str = ""


@dataclass(slots=True, kw_only=True)
class ToolCall(EventModel):
    id: str = ""
    #: The OpenAI tool type, normally ``"function"``; may be empty for foreign peers.
    type: str = "function"
    function: FunctionCall = field(default_factory=FunctionCall)


ContentPartType = Literal["text", "image", "audio", "file", "data"]


@dataclass(slots=True, kw_only=True)
class ContentPart(EventModel):
    """A multimodal part: text, image/audio/file by inline bytes or by URL, or structured
    data (``type="data"``, the JSON value in ``value``: an A2A DataPart)."""

    type: ContentPartType = "text"
    text: str = ""
    data: bytes | None = None
    url: str = ""
    #: MIME type (``image/png``) or a bare format (``png``), as the producer gave it.
    mime_type: str = ""
    #: File name; for images and audio trpc-agent-go writes ``image`` / ``audio``.
    name: str = ""
    #: ``type="data"`` only: a JSON-serialisable value.
    value: Any = None


@dataclass(slots=True, kw_only=True)
class ChatMessage(EventModel):
    """``model.Message``: used both as a choice's full ``message`` and as its ``delta``."""

    role: str = ""
    content: str = ""
    reasoning_content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_id: str = ""
    tool_name: str = ""
    content_parts: list[ContentPart] = field(default_factory=list)

    @property
    def is_tool_result(self) -> bool:
        """The one rule for "this message is a tool's result": the tool role or a tool id
        (trpc's ``convertToolResponseToA2AMessage`` test, ``docs/specs/trpc-interaction.md``
        §2.1)."""
        return self.role == Role.TOOL or bool(self.tool_id)

    def is_empty(self) -> bool:
        return not (
            self.content
            or self.reasoning_content
            or self.tool_calls
            or self.tool_id
            or self.tool_name
            or self.content_parts
        )


@dataclass(slots=True, kw_only=True)
class Choice(EventModel):
    index: int = 0
    message: ChatMessage = field(default_factory=ChatMessage)
    delta: ChatMessage = field(default_factory=ChatMessage)
    finish_reason: str | None = None


@dataclass(slots=True, kw_only=True)
class Usage(EventModel):
    """``model.Usage``: the tokens one LLM response used, when the agent reports them
    (the bridge's metrics count complete responses', ``gen_ai.client.token.usage``).
    Carried by the trpc codec as the ``usage`` response metadata (``docs/specs/trpc-interaction.md``
    §2.2) and by AgentHost's ``AgentEvent.usage``."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@dataclass(slots=True, kw_only=True)
class ResponseError(EventModel):
    type: str = ErrorType.FLOW
    message: str = ""
    code: str | None = None
    param: str | None = None


def _now() -> float:
    return time.time()


@dataclass(slots=True, kw_only=True)
class AgentEvent(EventModel):
    """One event of an agent run (trpc-agent-go ``event.Event`` with its ``model.Response``)."""

    #: LLM response id (``llm_response_id`` on the wire, ``artifactId`` when streaming).
    id: str = ""
    object: str = ""
    choices: list[Choice] = field(default_factory=list)
    is_partial: bool = False
    done: bool = False
    error: ResponseError | None = None
    #: ``;``-joined tags, e.g. ``code_execution_code`` or ``planner;trace``.
    tag: str = ""
    #: Session-state changes: key → raw bytes, or ``None`` for a deleted key.
    state_delta: dict[str, bytes | None] = field(default_factory=dict)
    author: str = ""
    invocation_id: str = ""
    #: Unique id of this event (not the response id); used where a fresh id is needed.
    event_id: str = field(default_factory=new_hex_id)
    #: Unix time in seconds.
    timestamp: float = field(default_factory=_now)
    #: ``object == TASK_STATUS`` only: a :class:`TaskStateName`.
    task_state: TaskStateLiteral = ""
    usage: Usage | None = None

    # --- queries --------------------------------------------------------------------

    @property
    def llm_response_id(self) -> str:
        return self.id

    @property
    def tags(self) -> list[str]:
        return [t for t in self.tag.split(Tag.DELIMITER) if t]

    def has_tag(self, tag: str) -> bool:
        return tag in self.tags

    @property
    def tool_results(self) -> list[ChatMessage]:
        """The complete tool-result messages of this event (see
        :attr:`ChatMessage.is_tool_result`)."""
        return [c.message for c in self.choices if c.message.is_tool_result]

    def is_tool_event(self) -> bool:
        """Tool calls or tool results in a complete message (trpc v0 never looks at the
        delta for this, ``docs/specs/trpc-interaction.md`` §2.1 step 5)."""
        for choice in self.choices:  # a loop, not any(): asked of every event encoded
            message = choice.message
            if message.tool_calls or message.is_tool_result:
                return True
        return False

    def is_terminal_error(self) -> bool:
        """trpc-agent-go's ``IsTerminalError``: an error that ends the run."""
        return self.error is not None and (self.object == ObjectType.ERROR or self.done)

    def is_runner_completion(self) -> bool:
        return self.done and self.object == ObjectType.RUNNER_COMPLETION

    def is_task_status(self) -> bool:
        return self.object == ObjectType.TASK_STATUS

    def to_json_line(self) -> str:
        """One compact JSON object, empty fields left out (the CLI's ``--json`` output),
        except what the chat-completion shape always has: every tool call's ``type``."""
        line = self.model_dump(
            mode="json", exclude_defaults=True, exclude={"event_id", "timestamp"}
        )
        for choice in line.get("choices", []):
            for side in ("message", "delta"):
                for call in choice.get(side, {}).get("tool_calls", []):
                    call["type"] = call.get("type") or "function"
        return json.dumps(line, ensure_ascii=False, separators=(",", ":"))

    # --- constructors: keep agents short ---------------------------------------------

    @classmethod
    def text_delta(cls, text: str, response_id: str, *, role: str = Role.ASSISTANT) -> AgentEvent:
        """A streamed piece of answer text (``chat.completion.chunk``, partial)."""
        delta = ChatMessage(role=role, content=text)
        return cls(
            id=response_id, object=ObjectType.CHUNK, is_partial=True, choices=[Choice(delta=delta)]
        )

    @classmethod
    def reasoning_delta(cls, text: str, response_id: str) -> AgentEvent:
        """A streamed piece of reasoning (``thought`` on the wire)."""
        delta = ChatMessage(role=Role.ASSISTANT, reasoning_content=text)
        return cls(
            id=response_id, object=ObjectType.CHUNK, is_partial=True, choices=[Choice(delta=delta)]
        )

    @classmethod
    def final_text(
        cls, text: str, response_id: str, *, reasoning: str = "", done: bool = True
    ) -> AgentEvent:
        """The complete (non-partial) LLM response, as trpc's model emits after its chunks."""
        return cls(
            id=response_id,
            object=ObjectType.COMPLETION,
            done=done,
            choices=[
                Choice(
                    message=ChatMessage(
                        role=Role.ASSISTANT, content=text, reasoning_content=reasoning
                    )
                )
            ],
        )

    @classmethod
    def tool_calls(
        cls, calls: list[ToolCall], response_id: str, *, reasoning: str = ""
    ) -> AgentEvent:
        """An LLM response that asks for one or more tool calls; ``reasoning`` is the
        response's complete reasoning, as a model's final response carries it (what a
        unary caller sees: partial chunks do not reach it)."""
        message = ChatMessage(role=Role.ASSISTANT, reasoning_content=reasoning, tool_calls=calls)
        return cls(id=response_id, object=ObjectType.COMPLETION, choices=[Choice(message=message)])

    @classmethod
    def tool_call(
        cls,
        name: str,
        arguments: str | Mapping[str, Any],
        *,
        call_id: str,
        response_id: str,
        reasoning: str = "",
    ) -> AgentEvent:
        """A single tool call; mapping arguments are serialised to a JSON string."""
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call = ToolCall(id=call_id, function=FunctionCall(name=name, arguments=args))
        return cls.tool_calls([call], response_id, reasoning=reasoning)

    @classmethod
    def tool_result(
        cls, call_id: str, name: str, content: str | Any, *, response_id: str = ""
    ) -> AgentEvent:
        """A tool's result. Non-string content is serialised to JSON.

        ``response_id`` is empty by default: trpc-agent-go gives single tool results no id.
        """
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return cls(
            id=response_id,
            object=ObjectType.TOOL_RESPONSE,
            choices=[
                Choice(
                    message=ChatMessage(
                        role=Role.TOOL, content=text, tool_id=call_id, tool_name=name
                    )
                )
            ],
        )

    @classmethod
    def code(cls, code: str, *, response_id: str = "") -> AgentEvent:
        """Code the agent is about to execute (``executable_code`` on the wire)."""
        return cls._code_execution(Tag.CODE, code, response_id)

    @classmethod
    def code_result(cls, output: str, *, response_id: str = "") -> AgentEvent:
        """Output of executed code (``code_execution_result`` on the wire)."""
        return cls._code_execution(Tag.CODE_RESULT, output, response_id)

    @classmethod
    def _code_execution(cls, tag: str, content: str, response_id: str) -> AgentEvent:
        return cls(
            id=response_id,
            object=ObjectType.CODE_EXECUTION,
            tag=tag,
            choices=[Choice(message=ChatMessage(role=Role.ASSISTANT, content=content))],
        )

    @classmethod
    def failure(
        cls,
        message: str,
        *,
        type: str = ErrorType.FLOW,
        code: str | None = None,
        param: str | None = None,
        response_id: str = "",
    ) -> AgentEvent:
        """A terminal error: ends the run (failed task; ``stop_agent_error`` → canceled)."""
        return cls(
            id=response_id,
            object=ObjectType.ERROR,
            done=True,
            error=ResponseError(type=type, message=message, code=code, param=param),
        )

    @classmethod
    def task_status(
        cls,
        state: TaskStateLiteral,
        text: str = "",
        *,
        content_parts: list[ContentPart] | None = None,
    ) -> AgentEvent:
        """Set the A2A task state (a :class:`TaskStateName`), with an optional status
        message. Any state but ``working`` ends the run; an agent that reports a state
        is answered with a ``Task`` (never a bare ``Message``) on a unary call."""
        message = ChatMessage(role=Role.ASSISTANT, content=text, content_parts=content_parts or [])
        return cls(
            object=ObjectType.TASK_STATUS,
            task_state=state,
            done=state != TaskStateName.WORKING,
            choices=[Choice(message=message)] if not message.is_empty() else [],
        )

    @classmethod
    def state(cls, delta: Mapping[str, bytes | None], *, response_id: str = "") -> AgentEvent:
        """A state-delta-only event (metadata-only frame on the wire)."""
        return cls(id=response_id, state_delta=dict(delta))


class AgentRequest(BaseModel):
    """What an agent is asked: the user's message plus session and identity."""

    model_config = _MODEL_CONFIG

    #: The user's text: all text parts concatenated without separator (as trpc does).
    text: str = ""
    #: Non-text content (images, audio, files) and structured data rendered as text parts.
    content_parts: list[ContentPart] = Field(default_factory=list)
    #: A2A ``contextId``: the session id.
    context_id: str = ""
    #: The caller's identity (``X-User-ID`` header / ``x-user-id`` gRPC metadata).
    user_id: str = ""
    invocation_id: str = ""
    message_id: str = ""
    #: ``interaction_spec_version`` the caller declared, ``None`` if it declared none.
    interaction_spec_version: str | None = None
    #: The request message's metadata, verbatim: trpc's RuntimeState.
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: The caller's bearer token, for an agent that forwards it upstream (a proxy): set by
    #: the server only for agents that ask (``forwards_caller_token``, ``agent.py``).
    #: Never serialised, masked in ``repr``.
    caller_token: SecretStr | None = Field(default=None, exclude=True, repr=False)
