"""Agent events → plain A2A: the answer, without trpc's execution trace.

What the bridge sends to a caller that did not declare a supported
``interaction_spec_version`` (negotiation ``auto``) or to every caller (``never``):
the documented intent of trpc's interaction spec that trpc-agent-go itself does not
implement (``docs/specs/trpc-interaction.md`` §3.1, §9.1). Assistant text is streamed as artifact
updates (one artifact per LLM response, ``append`` after the first chunk), with the response's
files and data as parts of the same artifact; reasoning, tool calls, tool results, code
execution, state deltas and trpc metadata are left out. A terminal error becomes a
``failed`` (or ``canceled``) status whose message is the error text. A task-status event
(:meth:`~trpc_bridge.events.AgentEvent.task_status`) becomes a status update in that
state with its message; any state but ``working`` ends the run.

A unary answer is the task those frames build (the encoder streams into the live task,
see :class:`~trpc_bridge.codecs.encoding.UnaryEncoding`), except for a direct reply —
answer text only: no task status, no file or data, no error — which is one agent
``Message`` with the whole text.
"""

from __future__ import annotations

from a2a.types import (
    Artifact,
    Message,
    Part,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

from trpc_bridge.codecs.encoding import (
    EncodingRequest,
    RunTarget,
    StreamFrame,
    WireVersion,
    fill_required_parts,
)
from trpc_bridge.codecs.trpc.request import content_part_to_a2a
from trpc_bridge.codecs.trpc.stream_frames import (
    completed_status,
    error_task_state,
    submitted_status,
    task_status,
)
from trpc_bridge.events import AgentEvent, ChatMessage, ContentPart, ObjectType, TaskStateName
from trpc_bridge.names import new_id

#: Artifact id for answer text that has no LLM response id.
ANSWER_ARTIFACT_ID = "answer"

_WIRE_STATES = {
    TaskStateName.WORKING: TaskState.TASK_STATE_WORKING,
    TaskStateName.INPUT_REQUIRED: TaskState.TASK_STATE_INPUT_REQUIRED,
    TaskStateName.AUTH_REQUIRED: TaskState.TASK_STATE_AUTH_REQUIRED,
    TaskStateName.COMPLETED: TaskState.TASK_STATE_COMPLETED,
    TaskStateName.REJECTED: TaskState.TASK_STATE_REJECTED,
}


def _answer_message(event: AgentEvent) -> ChatMessage | None:
    """The assistant content of a text event (its delta when partial); ``None`` for
    everything that is not answer content."""
    if not event.choices or event.object in (ObjectType.CODE_EXECUTION, ObjectType.TASK_STATUS):
        return None
    choice = event.choices[0]
    message = choice.message
    if message.tool_calls or message.is_tool_result:
        return None
    if event.is_partial or message.is_empty():
        return choice.delta
    return message


def _answer_text(event: AgentEvent) -> str:
    message = _answer_message(event)
    return message.content if message is not None else ""


def plain_part(part: ContentPart) -> Part:
    """A content part as plain A2A: a text, data or file part (no trpc metadata)."""
    if part.type in ("text", "data"):
        return content_part_to_a2a(part)
    out = Part(filename=part.name, media_type=part.mime_type)
    if part.data is not None:
        out.raw = part.data
    else:
        out.url = part.url
    return out


class PlainAnswer:
    """The answer text per LLM response, in first-seen order: deltas accumulate; a
    non-partial response replaces what its deltas said (it is the full text), unless it
    has no response id to say whose text it completes."""

    def __init__(self) -> None:
        self.texts: dict[str, list[str]] = {}
        #: Where answer text without a response id goes: one artifact per run of such
        #: events, so that text keeps its place between the responses around it.
        self._idless = ""

    def add(self, event: AgentEvent) -> tuple[str, str, bool] | None:
        """Record ``event``; returns ``(artifact_id, text, append)`` to send, or ``None``."""
        text = _answer_text(event)
        if not text:
            return None
        artifact_id = self.artifact_id(event)
        pieces = self.texts.get(artifact_id)
        if event.is_partial:
            self.texts.setdefault(artifact_id, []).append(text)
            return artifact_id, text, pieces is not None
        if pieces is not None and "".join(pieces) == text:
            return None  # the full text repeats the streamed chunks
        if pieces is not None and not event.id:
            # Without a response id one complete answer cannot replace another: each one
            # is more of the answer (e.g. a peer's messages that carried no id).
            pieces.append(text)
            return artifact_id, text, True
        self.texts[artifact_id] = [text]
        return artifact_id, text, False

    def artifact_id(self, event: AgentEvent) -> str:
        """The artifact ``event``'s answer goes to: its response id, else the artifact
        of the run of id-less answers it belongs to."""
        if event.id:
            self._idless = ""
            return event.id
        if not self._idless:
            taken = ANSWER_ARTIFACT_ID in self.texts
            self._idless = new_id(ANSWER_ARTIFACT_ID) if taken else ANSWER_ARTIFACT_ID
        return self._idless

    def text(self) -> str:
        return "".join("".join(pieces) for pieces in self.texts.values())


def _agent_message(parts: list[Part], *, task_id: str, context_id: str) -> Message:
    return Message(
        message_id=new_id("msg"),
        task_id=task_id,
        context_id=context_id,
        role=Role.ROLE_AGENT,
        parts=parts,
    )


def _error_frame(event: AgentEvent, *, task_id: str, context_id: str) -> TaskStatusUpdateEvent:
    parts = [Part(text=event.error.message)] if event.error and event.error.message else []
    message = _agent_message(parts, task_id=task_id, context_id=context_id)
    return TaskStatusUpdateEvent(
        task_id=task_id, context_id=context_id, status=task_status(error_task_state(event), message)
    )


class PlainStreamEncoder:
    """A :class:`~trpc_bridge.codecs.encoding.StreamEncoding`: the answer as artifact
    updates, task-status events as status updates, ``completed`` or the error status at
    the end."""

    def __init__(self, run: RunTarget) -> None:
        self.task_id = run.task_id
        self.context_id = run.context_id
        self.v1 = run.wire is WireVersion.V1_0
        self.done = False
        self.answer = PlainAnswer()
        #: The run was more than a direct reply (see :meth:`direct_reply`).
        self.task_like = False
        self._artifacts: set[str] = set()

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
            self.done = self.task_like = True
            return self._out(_error_frame(event, task_id=self.task_id, context_id=self.context_id))
        if event.is_task_status():
            return self._out(self._status(event))
        frames: list[StreamFrame] = []
        sent = self.answer.add(event)
        if sent is not None:
            artifact_id, text, append = sent
            frames.append(self._artifact(artifact_id, [Part(text=text)], append=append))
        message = _answer_message(event)
        if message is not None and message.content_parts:
            self.task_like = True
            artifact_id = self.answer.artifact_id(event)
            parts = [plain_part(part) for part in message.content_parts]
            frames.append(self._artifact(artifact_id, parts, append=artifact_id in self._artifacts))
        return frames

    def _out(self, frame: TaskStatusUpdateEvent) -> list[StreamFrame]:
        if self.v1:
            fill_required_parts(frame)
        return [frame]

    def _artifact(self, artifact_id: str, parts: list[Part], *, append: bool) -> StreamFrame:
        self._artifacts.add(artifact_id)
        return TaskArtifactUpdateEvent(
            task_id=self.task_id,
            context_id=self.context_id,
            artifact=Artifact(artifact_id=artifact_id, parts=parts),
            append=append,
        )

    def _status(self, event: AgentEvent) -> TaskStatusUpdateEvent:
        self.task_like = True
        self.done = event.task_state != TaskStateName.WORKING
        message = None
        if event.choices:
            content = event.choices[0].message
            parts = [Part(text=content.content)] if content.content else []
            parts += [plain_part(part) for part in content.content_parts]
            message = _agent_message(parts, task_id=self.task_id, context_id=self.context_id)
        state = _WIRE_STATES.get(event.task_state, TaskState.TASK_STATE_COMPLETED)
        return TaskStatusUpdateEvent(
            task_id=self.task_id, context_id=self.context_id, status=task_status(state, message)
        )

    def close(self) -> list[StreamFrame]:
        if self.done:
            return []
        self.done = True
        return [completed_status(task_id=self.task_id, context_id=self.context_id)]

    def direct_reply(self) -> Message | None:
        """The unary answer when the run was a direct reply: one agent ``Message`` with
        the whole answer text; ``None`` when the caller is owed the ``Task``."""
        if self.task_like:
            return None
        return Message(
            message_id=new_id("msg"),
            context_id=self.context_id,
            role=Role.ROLE_AGENT,
            parts=[Part(text=self.answer.text())],
        )


class PlainUnaryEncoder:
    """A :class:`~trpc_bridge.codecs.encoding.UnaryEncoding` that streams into the task:
    the answer is the task, or one ``Message`` for a direct reply."""

    def __init__(self, run: RunTarget) -> None:
        self.stream = PlainStreamEncoder(run)

    @property
    def streamed(self) -> PlainStreamEncoder:
        return self.stream

    def add(self, event: AgentEvent) -> bool:
        self.stream.encode(event)
        return not self.stream.done

    def result(self, *, context_id: str, task_id: str) -> Message | None:
        return self.stream.direct_reply()


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
