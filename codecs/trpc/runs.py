"""Whole trpc runs (``docs/specs/trpc-interaction.md`` §2.4, §2.6, §2.10): the stream envelope and
the unary packing around the per-event encoding of :mod:`trpc_bridge.codecs.trpc.encode`,
registered as the ``trpc`` encoding.

On the A2A 1.0 wire (JSON-RPC 1.0, REST, gRPC) the stream takes the shape of trpc's v1
server: an id-less event (a tool result, code) gets an artifact id ``artifact-<uuid>``,
the final chunk names the last artifact id with ``append: true``, and (for 1.0's required
fields) no message or artifact goes out without a part. Unlike trpc v1, which shares one
fallback id among all id-less events of a run, each gets its own: under A2A's artifact
semantics a repeated id without ``append`` *replaces* the artifact, so a shared id would
make a code result replace its code (``docs/specs/trpc-interaction.md`` §2.10).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from a2a.types import Message, Role, Task, TaskState

from trpc_bridge.codecs.a2a.packed import PackedResult
from trpc_bridge.codecs.a2a.proto_struct import fill_struct
from trpc_bridge.codecs.a2a.text_delta import TextDelta, TextRuns
from trpc_bridge.codecs.encoding import (
    EncodingRequest,
    RunFrame,
    RunTarget,
    StreamFrame,
    WireVersion,
    fill_required_parts,
)
from trpc_bridge.codecs.trpc.encode import (
    EncodedMessage,
    encode_event,
    response_metadata,
    streamed_text,
)
from trpc_bridge.codecs.trpc.keys import META_OBJECT_TYPE, META_STATE_DELTA, encode_state_delta
from trpc_bridge.codecs.trpc.request import supports_spec_version
from trpc_bridge.codecs.trpc.stream_frames import (
    artifact_update,
    completed_status,
    error_metadata,
    error_status,
    error_status_message,
    error_task_state,
    final_artifact_update,
    generic_error_message,
    submitted_status,
    task_status,
)
from trpc_bridge.events import AgentEvent, ObjectType
from trpc_bridge.names import new_id, new_ids


def unary_task_id(request_message_id: str) -> str:
    """``task-<request messageId>-<unix nanos>`` (trpc's ``buildMessageProcessingResult``)."""
    return f"task-{request_message_id}-{time.time_ns()}"


#: Enum members read once: each ``Role.ROLE_AGENT`` is a Python ``__getattr__`` call.
_ROLE_AGENT = Role.ROLE_AGENT
_COMPLETED = TaskState.TASK_STATE_COMPLETED


def _fill_agent_message(message: Message, encoded: EncodedMessage, message_id: str) -> Message:
    message.message_id = message_id
    message.role = _ROLE_AGENT
    if encoded.parts:
        message.parts.extend(encoded.parts)
    if encoded.metadata:
        fill_struct(message.metadata, encoded.metadata)
    return message


def _history(task: Task, messages: Sequence[EncodedMessage], ids: Sequence[str]) -> None:
    """``messages`` as the task's history (``ids`` their message ids), built in place (a
    ``Task(history=[...])`` copies every message it is given)."""
    add = task.history.add
    for encoded, message_id in zip(messages, ids, strict=False):  # ids may go on (the artifact)
        _fill_agent_message(add(), encoded, message_id)


def merge_completion_state(messages: Sequence[EncodedMessage], completion: AgentEvent) -> None:
    """Merge the runner completion's state delta into the last message's ``state_delta``
    (trpc's ``mergeRunnerCompletionStateDeltaIntoLastMessage``)."""
    if not messages or not completion.state_delta:
        return
    last = messages[-1].metadata
    merged = dict(last.get(META_STATE_DELTA, {}))
    merged.update(encode_state_delta(completion.state_delta))
    last[META_STATE_DELTA] = dict(sorted(merged.items()))


def pack_unary(
    messages: Sequence[EncodedMessage],
    *,
    context_id: str,
    task_id: str,
) -> PackedResult:
    """§2.6: one message → that ``Message``; several → a completed ``Task`` whose history
    is all but the last and whose single artifact is the last (artifactId = its id).
    The caller has already merged the runner completion (:func:`merge_completion_state`)
    and handled "no message at all" (trpc answers :func:`generic_error_message`)."""
    if len(messages) == 1:
        message_id = new_id("msg")

        def one_message() -> Message:
            message = _fill_agent_message(Message(), messages[0], message_id)
            message.context_id = context_id
            return message

        return PackedResult(messages, [message_id], context_id=context_id, build=one_message)
    *history, last = messages
    ids = new_ids("msg", len(messages))
    status = task_status(_COMPLETED)  # stamped now: the answer's time, however late built

    def whole_task() -> Task:
        task = Task(id=task_id, context_id=context_id, status=status)
        _history(task, history, ids)
        artifact = task.artifacts.add(artifact_id=ids[-1])
        artifact.parts.extend(last.parts)
        if last.metadata:
            fill_struct(artifact.metadata, last.metadata)
        return task

    return PackedResult(
        messages, ids, context_id=context_id, task_id=task_id, status=status, build=whole_task
    )


def unary_error_task(
    event: AgentEvent,
    messages: Sequence[EncodedMessage],
    *,
    context_id: str,
    task_id: str,
) -> Task:
    """Structured unary failure: history so far, failed/canceled status, error metadata."""
    task = Task(
        id=task_id,
        context_id=context_id,
        status=task_status(
            error_task_state(event),
            error_status_message(event, task_id=task_id, context_id=context_id),
        ),
    )
    _history(task, messages, new_ids("msg", len(messages)))
    task.metadata.update(error_metadata(event))
    return task


#: Object types a run keeps its bare update of (trpc has a handful of
#: ``preprocessing.*`` types; an agent's own are not a bounded set).
_MAX_BARE_TYPES = 16


class StreamEncoder:
    """One streaming run (§2.4): ``submitted`` → artifact updates → empty ``lastChunk``
    artifact → ``completed``; or a terminal error frame instead of the last two.

    Remembers which artifact ids were sent (for ``append``) and the last one (1.0's final
    chunk); ``done`` turns true when the run's last frame has been produced.
    """

    def __init__(self, run: RunTarget) -> None:
        self.task_id = run.task_id
        self.context_id = run.context_id
        self.options = run.options
        self.v1 = run.wire is WireVersion.V1_0
        # The 1.0 wire keeps protobuf frames (its own artifact ids and required parts).
        self.text_deltas = run.text_deltas and not self.v1
        self.done = False
        self._seen: set[str] = set()
        self._runs = TextRuns(run.task_id, run.context_id)
        self._last_id = ""
        #: :meth:`bare`'s update per object type, made once per run: a published frame is
        #: never changed, so one object serves every repeat (and a writer that has written
        #: it knows its bytes).
        self._bare: dict[str, StreamFrame] = {}

    def start(self, *, app_name: str, user_id: str) -> list[StreamFrame]:
        return [
            submitted_status(
                task_id=self.task_id,
                context_id=self.context_id,
                app_name=app_name,
                user_id=user_id,
                options=self.options,
            )
        ]

    def encode(self, event: AgentEvent) -> list[RunFrame]:
        if self.done:
            return []
        if event.is_runner_completion():
            return [*self._finish(event)]
        if event.is_terminal_error():
            self.done = True
            if not self.options.structured_errors:
                return self._out(generic_error_message(context_id=self.context_id))
            return self._out(error_status(event, task_id=self.task_id, context_id=self.context_id))
        streamed = streamed_text(event, self.options)
        if streamed is not None:  # the hot shape: no EncodedMessage, no dispatch
            return [self._text_delta(event, *streamed)]
        encoded = encode_event(event, self.options, streaming=True)
        if encoded is None:
            return []
        if self.v1 and not encoded.response_id:
            encoded.response_id = new_id("artifact")
        artifact_id = encoded.response_id
        append = encoded.partial and bool(artifact_id) and artifact_id in self._seen
        self._seen.add(artifact_id)
        self._last_id = artifact_id
        update = artifact_update(
            encoded, task_id=self.task_id, context_id=self.context_id, append=append
        )
        return self._out(update)

    def bare(self, object_type: str) -> StreamFrame | None:
        """What :meth:`encode` gives for an event of ``object_type`` without content,
        response id, tag, state delta, usage or error (a bare update decoded, see
        :meth:`~trpc_bridge.codecs.trpc.decode.StreamDecoder.bare_type`) when it changes
        nothing here but what it always sets (the empty artifact id seen and last): the
        update, its artifact id empty, never appended (a bare update does not append:
        it is not a text delta), its metadata the type. None: encode the event (a run
        that is done, the 1.0 wire, a type trpc filters)."""
        if (
            self.done
            or self.v1
            or not object_type
            or object_type.startswith(ObjectType.GRAPH_PREFIX)
        ):
            return None
        self._seen.add("")
        self._last_id = ""
        update = self._bare.get(object_type)
        if update is None:
            encoded = EncodedMessage([], {META_OBJECT_TYPE: object_type}, "", True)
            update = artifact_update(encoded, task_id=self.task_id, context_id=self.context_id)
            if len(self._bare) < _MAX_BARE_TYPES:
                self._bare[object_type] = update
        return update

    def _text_delta(self, event: AgentEvent, text: str, part_metadata: Any) -> RunFrame:
        """What :func:`artifact_update` would build for a streamed text delta: a
        :class:`TextDelta` when the run asked for them, else its protobuf (a copy of its
        run's template)."""
        artifact_id = event.id or (new_id("artifact") if self.v1 else "")
        append = bool(artifact_id) and artifact_id in self._seen
        self._seen.add(artifact_id)
        self._last_id = artifact_id
        run = self._runs.run(artifact_id, append, response_metadata(event), part_metadata)
        if self.text_deltas:
            return TextDelta(run, text)
        frame = run.frame(text)
        if self.v1:
            fill_required_parts(frame)
        return frame

    def close(self) -> list[StreamFrame]:
        """The agent's iterator ended without a runner completion: trpc v0 still sends
        the final artifact and ``completed``."""
        return self._finish(None)

    def _finish(self, completion: AgentEvent | None) -> list[StreamFrame]:
        if self.done:
            return []
        self.done = True
        final = final_artifact_update(
            task_id=self.task_id,
            context_id=self.context_id,
            completion=completion,
            last_artifact_id=(self._last_id or new_id("artifact")) if self.v1 else "",
        )
        # trpc v1: ``append`` says whether an artifact was sent before (1.0 needs an id).
        final.append = self.v1 and bool(self._last_id)
        if self.v1:
            fill_required_parts(final)
        return [final, completed_status(task_id=self.task_id, context_id=self.context_id)]

    def _out(self, frame: StreamFrame) -> list[RunFrame]:
        if self.v1:
            fill_required_parts(frame)
        return [frame]


class UnaryEncoder:
    """One ``message/send`` run (§2.6). Feed events with :meth:`add` until it returns
    ``False`` (a terminal error or the runner completion ended the run), then take
    :meth:`result`. As in trpc, partial chunks are not skipped: each becomes a
    metadata-only message (its ``Message`` is empty), so avoid streaming agents behind
    ``message/send`` or expect those entries in the history.
    """

    #: trpc packs the answer from every event at the end: nothing streams (see
    #: :class:`~trpc_bridge.codecs.encoding.UnaryEncoding`).
    streamed = None

    def __init__(self, run: RunTarget) -> None:
        self.options = run.options
        self.v1 = run.wire is WireVersion.V1_0
        self.messages: list[EncodedMessage] = []
        self.error: AgentEvent | None = None

    def add(self, event: AgentEvent) -> bool:
        if event.is_runner_completion():
            merge_completion_state(self.messages, event)
            return False
        if event.is_terminal_error():
            self.error = event
            return False
        encoded = encode_event(event, self.options, streaming=False)
        if encoded is not None:
            self.messages.append(encoded)
        return True

    def add_encoded(self, messages: Sequence[EncodedMessage]) -> None:
        """Messages of events encoded elsewhere, as :meth:`add` would have kept them (a
        proxy's relay of its upstream's answer: ``server/proxying/unary_relay.py``)."""
        self.messages.extend(messages)

    def result(self, *, context_id: str, task_id: str) -> Message | Task:
        result: Message | Task
        if self.error is not None and self.options.structured_errors:
            result = unary_error_task(
                self.error, self.messages, context_id=context_id, task_id=task_id
            )
        elif self.error is not None or not self.messages:
            result = generic_error_message(context_id=context_id)
        else:
            result = pack_unary(self.messages, context_id=context_id, task_id=task_id).proto
        if self.v1:
            fill_required_parts(result)
        return result

    def answer(self, *, context_id: str, task_id: str) -> Message | Task | PackedResult:
        """:meth:`result`; packed from the run's messages on the 0.3 wire, as the
        :class:`PackedResult` a writer of its JSON reads instead of the protobuf (not by
        a subclass that rewrites the result)."""
        packs = self.error is None and self.messages and not self.v1
        if packs and type(self).result is UnaryEncoder.result:
            return pack_unary(self.messages, context_id=context_id, task_id=task_id)
        return self.result(context_id=context_id, task_id=task_id)


class TrpcEncoding:
    """trpc-agent-go's own encoding, for callers that declare a supported
    ``interaction_spec_version`` (§3.1)."""

    name = "trpc"

    def accepts(self, request: EncodingRequest) -> bool:
        return supports_spec_version(request.spec_version)

    def stream(self, run: RunTarget) -> StreamEncoder:
        return StreamEncoder(run)

    def unary(self, run: RunTarget) -> UnaryEncoder:
        return UnaryEncoder(run)


TRPC = TrpcEncoding()
