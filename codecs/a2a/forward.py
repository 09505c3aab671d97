"""An upstream's A2A 0.3 stream frames as the frames of a task of this server, for a
proxy whose caller speaks the upstream's wire and encoding (``docs/wire-spec.md`` §4.5).

Each frame keeps what the upstream's server wrote and changes only what must change: the
task and context ids become this server's (the JSON-RPC id is the caller's, written by
the door). Nothing is decoded to agent events and encoded again:

- a streamed text delta (an artifact update of one text part, with string, bool, number
  or null metadata) becomes a :class:`~trpc_bridge.codecs.a2a.text_delta.TextDelta` of a
  run interned here, as the stream encoder makes them: a door that asked for text deltas
  writes it from its run's bytes, the others get its protobuf;
- every other frame becomes its protobuf: read straight from the JSON when it is in the
  plain shape (:mod:`~trpc_bridge.codecs.a2a.json03_read`), else through a2a-sdk's 0.3
  models (the same protobuf); a Task frame is its status and one artifact update per
  artifact; ``"parts": null`` (Go's empty list) is an empty list, and a part of a kind
  A2A 0.3 does not have is left out (as the decoder leaves it out: no frame can carry
  it);
- the upstream's ``submitted`` status is left out: this server published its own when
  it accepted the task;
- thinking and error text are masked by the redaction policy, as the runner masks the
  events they stand for (:class:`~trpc_bridge.redaction.EventRedactor`): streamed
  thinking through one stream redactor per response, what it holds back released as one
  more thinking delta before the response's complete frame and before the run's end,
  complete thinking and ``error_message`` (and a failed status's text) masked whole.

A frame that is not a 0.3 stream result raises :class:`~trpc_bridge.codecs.errors.CodecError`
(the caller skips it, as trpc's client skips frames it cannot read).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from a2a.compat.v0_3 import types as types_v03
from a2a.compat.v0_3.conversions import (
    to_core_message,
    to_core_task,
    to_core_task_artifact_update_event,
    to_core_task_status_update_event,
)
from a2a.types import TaskArtifactUpdateEvent, TaskStatusUpdateEvent

from trpc_bridge.codecs.a2a import json03_read
from trpc_bridge.codecs.a2a.text_delta import TextDelta, TextRuns
from trpc_bridge.codecs.encoding import EncodeOptions, RunFrame, StreamFrame
from trpc_bridge.codecs.errors import CodecError
from trpc_bridge.codecs.trpc.encode import thought_metadata
from trpc_bridge.codecs.trpc.keys import (
    ADK_PREFIX,
    META_ERROR_MESSAGE,
    META_OBJECT_TYPE,
    META_RESPONSE_ID,
    PART_THOUGHT,
)
from trpc_bridge.events import ObjectType
from trpc_bridge.redaction import OFF, Redaction, StreamRedactor

#: States whose status message is the error's text (``codecs/trpc/encode.py``).
_FAILURE_STATES = frozenset({"failed", "canceled", "rejected"})
_ADK_THOUGHT = ADK_PREFIX + PART_THOUGHT
#: States after which the upstream's run produces nothing more (0.3 spelling).
ENDING_STATES = frozenset(
    {"completed", "canceled", "failed", "rejected", "input-required", "auth-required"}
)
_DELTA_KEYS = frozenset(
    {"append", "artifact", "contextId", "kind", "lastChunk", "metadata", "taskId"}
)
_ARTIFACT_KEYS = frozenset({"artifactId", "parts", "metadata"})
_PART_KEYS = frozenset({"kind", "text", "metadata"})
#: Metadata values a text delta's run keeps as they are (nested values take the general
#: path, which bounds their depth).
_SCALAR_TYPES = frozenset({str, bool, int, float, type(None)})
T = TypeVar("T")


def _scalars(metadata: Any) -> bool:
    """A non-empty mapping of scalars (an empty one is written as ``{}``: general path)."""
    if type(metadata) is not dict or not metadata:
        return False
    return _SCALAR_TYPES.issuperset(map(type, metadata.values()))


_PART_KINDS = frozenset({"text", "data", "file"})


def _lists(holder: Any, key: str) -> None:
    """Go writes an empty list as ``null``: a2a-sdk's 0.3 models want the list; parts
    of an unknown kind are left out."""
    if not isinstance(holder, dict) or key not in holder:
        return
    parts = holder[key]
    if parts is None:
        holder[key] = []
    elif isinstance(parts, list):
        holder[key] = [p for p in parts if not isinstance(p, dict) or p.get("kind") in _PART_KINDS]


class Forwarder:
    """One upstream stream's frames as frames of ``task_id`` in ``context_id`` (keep one
    per stream)."""

    def __init__(self, task_id: str, context_id: str, redaction: Redaction = OFF) -> None:
        self.task_id = task_id
        self.context_id = context_id
        self._runs = TextRuns(task_id, context_id)
        self._redaction = redaction if redaction is not OFF else None
        #: Streamed thinking per response id, what its redactor holds back.
        self._held: dict[str, StreamRedactor] = {}
        #: Artifacts whose first frames were not sent (a delta whose thinking is all held
        #: back): the next frame sent opens the artifact, ``append`` or not.
        self._unopened: set[str] = set()
        #: The upstream's own task id (to cancel it), once a frame has named it.
        self.upstream_task_id = ""
        #: The upstream's last task state (0.3 spelling).
        self.state = ""
        #: A frame ended the run (a terminal or interrupted state).
        self.ended = False

    def frames(self, result: Any) -> list[RunFrame]:
        if type(result) is not dict:
            raise CodecError("stream result is not an object")
        if not self.upstream_task_id:
            upstream = result.get("taskId") or result.get("id")
            self.upstream_task_id = upstream if isinstance(upstream, str) else ""
        kind = result.get("kind")
        if kind == "artifact-update":
            delta = self._delta(result)
            if delta is not None and (self._redaction is None or self._plain(delta)):
                return [delta]
        released: list[RunFrame] = []
        if self._redaction is not None:
            released, keep = self._masked(result, kind)
            if not keep:
                return released
            if kind == "artifact-update":
                self._opened(result)
        if kind == "artifact-update":
            delta = self._delta(result)
            return [*released, delta if delta is not None else self._artifact(result)]
        if kind == "status-update":
            return released + self._status(result)
        if kind == "message":
            return [self._message(result)]
        if kind == "task":
            return self._task(result)
        raise CodecError(f"unknown stream result kind {kind!r}")

    def _delta(self, result: dict[str, Any]) -> TextDelta | None:
        """The hot shape, or None (then the general path)."""
        artifact = result.get("artifact")
        if result.get("lastChunk") or type(artifact) is not dict:
            return None
        parts = artifact.get("parts")
        if type(parts) is not list or len(parts) != 1:
            return None
        part = parts[0]
        if type(part) is not dict or part.get("kind") != "text":
            return None
        text = part.get("text")
        artifact_id = artifact.get("artifactId")
        if type(text) is not str or type(artifact_id) is not str:
            return None
        if not (
            result.keys() <= _DELTA_KEYS
            and artifact.keys() <= _ARTIFACT_KEYS
            and part.keys() <= _PART_KEYS
        ):
            return None
        metadata = result.get("metadata")
        artifact_metadata = artifact.get("metadata")
        part_metadata = part.get("metadata")
        if not _scalars(metadata) or artifact_metadata not in (None, metadata):
            return None
        if part_metadata is not None and not _scalars(part_metadata):
            return None
        run = self._runs.run(
            artifact_id,
            result.get("append") is True,
            metadata,  # type: ignore[arg-type]  # a dict: _scalars checked it
            part_metadata,
            artifact_metadata=artifact_metadata is not None,
        )
        return TextDelta(run, text)

    # --- redaction ----------------------------------------------------------------------

    def _masked(self, result: dict[str, Any], kind: Any) -> tuple[list[RunFrame], bool]:
        """Mask ``result``'s thinking and error text in place; the thinking deltas to
        send before it (held back text, released), and whether to send it at all."""
        policy = self._redaction
        assert policy is not None
        metadata = result.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        _mask_error(metadata, policy)
        if kind == "status-update":
            status = result.get("status")
            state = status.get("state") if isinstance(status, dict) else None
            released = self.release() if state in ENDING_STATES else []
            message = status.get("message") if isinstance(status, dict) else None
            if isinstance(message, dict):
                _mask_error(message.get("metadata"), policy)
                for part in _parts(message):
                    if state in _FAILURE_STATES or _thought(part):
                        _mask_text(part, policy.text)
            return released, True
        if kind != "artifact-update":
            return [], True
        artifact = result.get("artifact")
        if not isinstance(artifact, dict):
            return [], True
        _mask_error(artifact.get("metadata"), policy)
        parts = [p for p in _parts(artifact) if _thought(p)]
        response = _response_id(result, artifact, metadata)
        streamed = metadata.get(META_OBJECT_TYPE) == ObjectType.CHUNK
        released = []
        if self._held and not streamed and response in self._held:
            released = self._release(response)
        if not parts:
            return released, True
        if not streamed:
            for part in parts:
                _mask_text(part, policy.text)
            return released, True
        stream = self._held.get(response)
        if stream is None:
            stream = self._held[response] = policy.stream()
        for part in parts:
            _mask_text(part, stream.feed)
        left = [p for p in _parts(artifact) if not _thought(p) or p.get("text")]
        if left or result.get("lastChunk"):
            return released, True
        # A delta that only carried thinking, all of it held back: nothing to send yet.
        artifact_id = artifact.get("artifactId")
        if isinstance(artifact_id, str) and result.get("append") is not True:
            self._unopened.add(artifact_id)
        return released, False

    def _plain(self, delta: TextDelta) -> bool:
        """A delta with nothing to mask (answer text, no error), of an open artifact."""
        run = delta.run
        return (
            run.part_metadata is None
            and not self._held
            and META_ERROR_MESSAGE not in run.metadata
            and (not self._unopened or run.artifact_id not in self._unopened)
        )

    def _opened(self, result: dict[str, Any]) -> None:
        """The artifact is open once a frame of it is sent: ``append`` is false on the
        first one sent (its earlier frames were held back)."""
        if not self._unopened:
            return
        artifact = result.get("artifact")
        artifact_id = artifact.get("artifactId") if isinstance(artifact, dict) else None
        if artifact_id in self._unopened:
            result["append"] = False
            self._unopened.discard(artifact_id)

    def release(self) -> list[RunFrame]:
        """The thinking still held back, as one more delta per response (the run ends)."""
        return [frame for response in list(self._held) for frame in self._release(response)]

    def _release(self, response: str) -> list[RunFrame]:
        tail = self._held.pop(response).flush()
        if not tail:
            return []
        # What the stream encoder writes for AgentEvent.reasoning_delta(tail, response).
        metadata = {META_OBJECT_TYPE: ObjectType.CHUNK, META_RESPONSE_ID: response}
        part = thought_metadata(_ENCODE)
        append = response not in self._unopened
        self._unopened.discard(response)
        return [TextDelta(self._runs.run(response, append, metadata, part), tail)]

    def _ids(self, frame: dict[str, Any]) -> dict[str, Any]:
        frame["taskId"] = self.task_id
        frame["contextId"] = self.context_id
        return frame

    def _message_ids(self, message: Any) -> None:
        if isinstance(message, dict):
            _lists(message, "parts")
            if message.get("taskId"):
                message["taskId"] = self.task_id
            if message.get("contextId"):
                message["contextId"] = self.context_id

    def _artifact(self, result: dict[str, Any]) -> TaskArtifactUpdateEvent:
        _lists(result.get("artifact"), "parts")
        return _converted(
            json03_read.artifact_update,
            to_core_task_artifact_update_event,
            types_v03.TaskArtifactUpdateEvent,
            self._ids(result),
        )

    def _status(self, result: dict[str, Any]) -> list[RunFrame]:
        status = result.get("status")
        state = status.get("state") if isinstance(status, dict) else None
        if isinstance(status, dict):
            self._message_ids(status.get("message"))
        if state == "submitted" and not (isinstance(status, dict) and status.get("message")):
            self.state = state
            return []  # this server's own submitted status went out when it accepted
        frame = _converted(
            json03_read.status_update,
            to_core_task_status_update_event,
            types_v03.TaskStatusUpdateEvent,
            self._ids(result),
        )
        self._note_state(state)
        return [frame]

    def _note_state(self, state: Any) -> None:
        if isinstance(state, str):
            self.state = state
            self.ended = self.ended or state in ENDING_STATES

    def _message(self, result: dict[str, Any]) -> StreamFrame:
        self._message_ids(result)
        return _converted(json03_read.message, to_core_message, types_v03.Message, result)

    def _task(self, result: dict[str, Any]) -> list[RunFrame]:
        """A Task frame: its status, then each artifact as an update (the history is
        the conversation the caller already has)."""
        result["id"] = self.task_id
        result["contextId"] = self.context_id
        result.pop("history", None)
        for artifact in result.get("artifacts") or ():
            _lists(artifact, "parts")
        status = result.get("status")
        if isinstance(status, dict):
            self._message_ids(status.get("message"))
        task = _converted(None, to_core_task, types_v03.Task, result)
        frames: list[RunFrame] = [
            TaskArtifactUpdateEvent(
                task_id=self.task_id, context_id=self.context_id, artifact=artifact
            )
            for artifact in task.artifacts
        ]
        update = TaskStatusUpdateEvent(
            task_id=self.task_id, context_id=self.context_id, status=task.status
        )
        if task.metadata:
            update.metadata.CopyFrom(task.metadata)
        self._note_state(status.get("state") if isinstance(status, dict) else None)
        return [*frames, update]


#: The options a relayed run is written with (a relay takes only the default's).
_ENCODE = EncodeOptions()


def _parts(holder: dict[str, Any]) -> list[Any]:
    parts = holder.get("parts")
    return parts if isinstance(parts, list) else []


def _thought(part: Any) -> bool:
    if not isinstance(part, dict) or part.get("kind") != "text":
        return False
    metadata = part.get("metadata")
    return isinstance(metadata, dict) and (
        metadata.get(PART_THOUGHT) is True or metadata.get(_ADK_THOUGHT) is True
    )


def _mask_text(part: Any, mask: Callable[[str], str]) -> None:
    text = part.get("text") if isinstance(part, dict) else None
    if isinstance(text, str) and text:
        part["text"] = mask(text)


def _mask_error(metadata: Any, policy: Redaction) -> None:
    if isinstance(metadata, dict):
        message = metadata.get(META_ERROR_MESSAGE)
        if isinstance(message, str) and message:
            metadata[META_ERROR_MESSAGE] = policy.text(message)


def _response_id(result: dict[str, Any], artifact: dict[str, Any], metadata: Any) -> str:
    """The event id the decoder would give a frame: its response id, else the artifact's."""
    response = metadata.get(META_RESPONSE_ID) if isinstance(metadata, dict) else None
    if not isinstance(response, str) or not response:
        response = artifact.get("artifactId")
    return response if isinstance(response, str) else ""


def _converted(
    read: Callable[[Any], T] | None,
    convert: Callable[[Any], T],
    model: type[Any],
    document: Mapping[str, Any],
) -> T:
    """``document`` read straight (``read``) when plain, else validated as a2a-sdk's 0.3
    ``model`` and converted to protobuf: the same protobuf either way."""
    if read is not None:
        try:
            return read(document)
        except json03_read.NotPlain:
            pass
    try:
        return convert(model.model_validate(document))
    except Exception as exc:  # pydantic's ValidationError, protobuf's limits
        raise CodecError(f"unreadable {model.__name__}: {type(exc).__name__}") from None
