"""Agent events → plain A2A: the answer text only.

What the bridge sends to a caller that did not declare a supported
``interaction_spec_version`` (negotiation ``auto``) or to every caller (``never``):
the documented intent of trpc's interaction spec that trpc-agent-go itself does not
implement (``docs/wire-spec.md`` §3.1, §9.1). Assistant text is streamed as artifact updates (one
artifact per LLM response, ``append`` after the first chunk); reasoning, tool calls,
tool results, code execution, state deltas and trpc metadata are left out. A terminal
error becomes a ``failed`` (or ``canceled``) status whose message is the error text.
"""

from __future__ import annotations

from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)

from trpc_bridge.codecs.encoding import (
    EncodingRequest,
    RunTarget,
    StreamFrame,
    WireVersion,
    fill_required_parts,
)
from trpc_bridge.codecs.trpc_encode import (
    completed_status,
    error_task_state,
    submitted_status,
    task_status,
)
from trpc_bridge.events import AgentEvent, ObjectType
from trpc_bridge.names import new_id

#: Artifact id for answer text that has no LLM response id.
ANSWER_ARTIFACT_ID = "answer"


def _answer_text(event: AgentEvent) -> str:
    """The assistant text of a text event; ``""`` for everything else."""
    if not event.choices or event.object == ObjectType.CODE_EXECUTION:
        return ""
    choice = event.choices[0]
    message = choice.message
    if message.tool_calls or message.is_tool_result:
        return ""
    if event.is_partial:
        return choice.delta.content
    return message.content or choice.delta.content


class PlainAnswer:
    """The answer text per LLM response, in first-seen order: deltas accumulate; a
    non-partial response replaces what its deltas said (it is the full text)."""

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {}

    def add(self, event: AgentEvent) -> tuple[str, str, bool] | None:
        """Record ``event``; returns ``(artifact_id, text, append)`` to send, or ``None``."""
        text = _answer_text(event)
        if not text:
            return None
        artifact_id = event.id or ANSWER_ARTIFACT_ID
        pieces = self.texts.get(artifact_id)
        if event.is_partial:
            self.texts.setdefault(artifact_id, []).append(text)
            return artifact_id, text, pieces is not None
        if pieces is not None and "".join(pieces) == text:
            return None  # the full text repeats the streamed chunks
        self.texts[artifact_id] = [text]
        return artifact_id, text, False

    def text(self) -> str:
        return "".join("".join(pieces) for pieces in self.texts.values())


def _error_frame(event: AgentEvent, *, task_id: str, context_id: str) -> TaskStatusUpdateEvent:
    message = Message(
        message_id=new_id("msg"), task_id=task_id, context_id=context_id, role=Role.ROLE_AGENT
    )
    if event.error is not None and event.error.message:
        message.parts.append(Part(text=event.error.message))
    return TaskStatusUpdateEvent(
        task_id=task_id, context_id=context_id, status=task_status(error_task_state(event), message)
    )


class PlainStreamEncoder:
    """A :class:`~trpc_bridge.codecs.encoding.StreamEncoding`: the answer text as artifact
    updates, ``completed`` or the error status at the end."""

    def __init__(self, run: RunTarget) -> None:
        self.task_id = run.task_id
        self.context_id = run.context_id
        self.v1 = run.wire is WireVersion.V1_0
        self.done = False
        self.answer = PlainAnswer()

    def start(self, *, app_name: str, user_id: str) -> list[StreamFrame]:
        submitted = submitted_status(
            task_id=self.task_id, context_id=self.context_id, app_name=app_name, user_id=user_id
        )
        return [submitted]

    def encode(self, event: AgentEvent) -> list[StreamFrame]:
        if self.done:
            return []
        if event.is_runner_completion():
            return self.close()
        if event.is_terminal_error():
            self.done = True
            frame = _error_frame(event, task_id=self.task_id, context_id=self.context_id)
            if self.v1:
                fill_required_parts(frame)
            return [frame]
        sent = self.answer.add(event)
        if sent is None:
            return []
        artifact_id, text, append = sent
        return [
            TaskArtifactUpdateEvent(
                task_id=self.task_id,
                context_id=self.context_id,
                artifact=Artifact(artifact_id=artifact_id, parts=[Part(text=text)]),
                append=append,
            )
        ]

    def close(self) -> list[StreamFrame]:
        if self.done:
            return []
        self.done = True
        return [completed_status(task_id=self.task_id, context_id=self.context_id)]


class PlainUnaryEncoder:
    """A :class:`~trpc_bridge.codecs.encoding.UnaryEncoding`: the answer is one agent
    ``Message`` with the whole text; a terminal error gives a failed (or canceled)
    ``Task`` whose status message is the error text."""

    def __init__(self, run: RunTarget) -> None:
        self.v1 = run.wire is WireVersion.V1_0
        self.answer = PlainAnswer()
        self.error: AgentEvent | None = None

    def add(self, event: AgentEvent) -> bool:
        if event.is_runner_completion():
            return False
        if event.is_terminal_error():
            self.error = event
            return False
        self.answer.add(event)
        return True

    def result(self, *, context_id: str, task_id: str) -> Message | Task:
        if self.error is not None:
            frame = _error_frame(self.error, task_id=task_id, context_id=context_id)
            task = Task(id=task_id, context_id=context_id, status=frame.status)
            if self.v1:
                fill_required_parts(task)
            return task
        return Message(
            message_id=new_id("msg"),
            context_id=context_id,
            role=Role.ROLE_AGENT,
            parts=[Part(text=self.answer.text())],
        )


class PlainEncoding:
    """Plain A2A: what every caller that asked for nothing else gets (§3.1)."""

    name = "plain"

    def accepts(self, request: EncodingRequest) -> bool:
        return True

    def stream(self, run: RunTarget) -> PlainStreamEncoder:
        return PlainStreamEncoder(run)

    def unary(self, run: RunTarget) -> PlainUnaryEncoder:
        return PlainUnaryEncoder(run)


PLAIN = PlainEncoding()
