"""Incremental ``Task`` aggregation for ``tasks/get`` and the task store.

Each frame is applied in O(size of the frame): artifact parts are appended to
per-artifact lists (consecutive text deltas to a list of string pieces), status and
metadata are replaced or merged; a replaced status message moves to the history, as
A2A's TaskManager does (so tfrs progress in working updates stays in ``tasks/get``).
The ``Task`` proto is only built by :meth:`TaskAggregate.snapshot` — on ``tasks/get``,
on resubscribe and once at the end.

Artifact semantics follow A2A: ``append`` extends an artifact, otherwise the frame
replaces it (which is how the full text trpc re-sends after its chunks ends up as the
artifact's content). Frames without an artifact id (tool results, code execution) each
become their own artifact. The empty ``lastChunk`` artifact adds nothing but its
metadata, merged into the task metadata like status-update metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from a2a.types import Artifact, Message, Part, Task, TaskArtifactUpdateEvent, TaskStatus
from google.protobuf.struct_pb2 import Struct

from trpc_bridge.codecs.a2a.text_delta import TextDelta
from trpc_bridge.codecs.encoding import StreamFrame
from trpc_bridge.server.tasks.states import INTERRUPTED_STATES, TERMINAL_STATES

#: Text pieces of a run joined into one string every this many: a long stream keeps its
#: text, not one string object (~60 bytes over the text itself) per delta.
_FOLD = 256


@dataclass
class _TextRun:
    pieces: list[str]
    metadata: Struct
    #: The part metadata of the :class:`TextDelta` that started the run: later deltas
    #: compare with it instead of building a ``Struct`` (unset for protobuf parts).
    source: object = field(default=None)
    from_delta: bool = False
    #: Pieces appended since the last fold.
    loose: int = 0

    def add(self, text: str) -> None:
        self.pieces.append(text)
        self.loose += 1
        if self.loose == _FOLD:
            self.pieces[-_FOLD:] = ["".join(self.pieces[-_FOLD:])]
            self.loose = 0


def _struct(metadata: Mapping[str, Any] | None) -> Struct:
    struct = Struct()
    if metadata:
        struct.update(dict(metadata))
    return struct


@dataclass
class _ArtifactAcc:
    artifact_id: str
    metadata: Struct = field(default_factory=Struct)
    parts: list[Part | _TextRun] = field(default_factory=list)

    def replace(self, update: TaskArtifactUpdateEvent) -> None:
        artifact = update.artifact
        # Shared, not copied: a published frame is never changed, and this Struct is only
        # ever copied from (as a text run's template's).
        self.metadata = artifact.metadata
        self.parts = []
        if artifact.parts:
            self.extend(update)

    def extend(self, update: TaskArtifactUpdateEvent) -> None:
        for part in update.artifact.parts:
            last = self.parts[-1] if self.parts else None
            if part.WhichOneof("content") != "text":
                self.parts.append(part)
            elif isinstance(last, _TextRun) and last.metadata == part.metadata:
                last.add(part.text)
            else:
                self.parts.append(_TextRun([part.text], part.metadata))

    def replace_text(self, delta: TextDelta) -> None:
        """:meth:`replace` by ``delta.to_proto()``, without building it (the run's
        template's Structs are shared: they are only ever copied from)."""
        template = delta.run.template()
        self.metadata = template.artifact.metadata
        source = delta.run.part_metadata
        part = template.artifact.parts[0].metadata
        self.parts = [_TextRun([delta.text], part, source, from_delta=True)]

    def extend_text(self, delta: TextDelta) -> None:
        """:meth:`extend` by ``delta.to_proto()``, without building it."""
        last = self.parts[-1] if self.parts else None
        source = delta.run.part_metadata
        if isinstance(last, _TextRun):
            if last.from_delta:
                same = last.source is source or last.source == source
            elif same := last.metadata == _struct(source):
                # A run begun by a protobuf part (an artifact's first chunk): compare its
                # later deltas by their source too, not by building a Struct for each.
                last.source, last.from_delta = source, True
            if same:
                last.add(delta.text)
                return
        self.parts.append(_TextRun([delta.text], _struct(source), source, from_delta=True))

    def build(self, artifact: Artifact | None = None) -> Artifact:
        """The artifact (filled into ``artifact``, e.g. a task's new entry, when given)."""
        if artifact is None:
            artifact = Artifact()
        artifact.artifact_id = self.artifact_id
        if self.metadata:
            artifact.metadata.CopyFrom(self.metadata)
        for part in self.parts:
            if isinstance(part, _TextRun):
                built = artifact.parts.add(text="".join(part.pieces))
                if part.metadata:
                    built.metadata.CopyFrom(part.metadata)
            else:
                artifact.parts.append(part)
        return artifact


class TaskAggregate:
    """The task a stream of frames describes, kept up to date one frame at a time."""

    def __init__(self, *, task_id: str, context_id: str, user_message: Message) -> None:
        self.task_id = task_id
        self.context_id = context_id
        self.status = TaskStatus()
        self.metadata = Struct()
        self.history: list[Message] = [user_message]
        self._artifacts: dict[str, _ArtifactAcc] = {}
        self._anonymous = 0

    @classmethod
    def from_task(cls, task: Task) -> TaskAggregate:
        """The aggregate of a stored task, to continue it (a follow-up message to a task
        waiting for input)."""
        aggregate = cls(task_id=task.id, context_id=task.context_id, user_message=Message())
        aggregate.history = list(task.history)
        aggregate.status.CopyFrom(task.status)
        aggregate.metadata.CopyFrom(task.metadata)
        for artifact in task.artifacts:
            key = artifact.artifact_id or f"\0{len(aggregate._artifacts)}"
            acc = aggregate._artifacts[key] = _ArtifactAcc(artifact.artifact_id)
            acc.metadata.CopyFrom(artifact.metadata)
            # Text as runs again, so deltas that follow extend it (one part, as live).
            acc.parts = [
                _TextRun([part.text], part.metadata)
                if part.WhichOneof("content") == "text"
                else part
                for part in artifact.parts
            ]
        aggregate._anonymous = len(aggregate._artifacts)
        return aggregate

    def apply_text(self, delta: TextDelta) -> None:
        """:meth:`apply` of ``delta.to_proto()``: the text joins its artifact's last text
        run without the protobuf being built (but for an artifact's first chunk)."""
        run = delta.run
        if not run.artifact_id:  # its own anonymous artifact: as the protobuf
            self._apply_artifact(delta.to_proto())
            return
        acc = self._artifacts.get(run.artifact_id)
        if acc is None:
            acc = self._artifacts[run.artifact_id] = _ArtifactAcc(run.artifact_id)
            acc.replace_text(delta)
        elif run.append:
            acc.extend_text(delta)
        else:
            acc.replace_text(delta)

    def apply(self, frame: StreamFrame) -> None:
        if isinstance(frame, TaskArtifactUpdateEvent):
            self._apply_artifact(frame)
        elif isinstance(frame, Message):
            self.history.append(frame)
        else:
            if self.status.HasField("message"):
                # A2A's TaskManager rule: a replaced status message moves to the history,
                # so working updates (tfrs progress) stay readable through tasks/get.
                replaced = Message()
                replaced.CopyFrom(self.status.message)
                self.history.append(replaced)
            self.status.CopyFrom(frame.status)
            if frame.metadata:
                self.metadata.MergeFrom(frame.metadata)

    def _apply_artifact(self, update: TaskArtifactUpdateEvent) -> None:
        artifact_id = update.artifact.artifact_id
        if update.last_chunk and not update.artifact.parts:
            if update.metadata:
                self.metadata.MergeFrom(update.metadata)
            return
        if not artifact_id:
            self._anonymous += 1
            key = f"\0{self._anonymous}"  # cannot collide with a real artifact id
        else:
            key = artifact_id
        acc = self._artifacts.get(key)
        if acc is None:
            # Its metadata given (replaced at once): no default Struct built to be dropped.
            acc = self._artifacts[key] = _ArtifactAcc(artifact_id, update.artifact.metadata)
            acc.replace(update)
        elif update.append:
            acc.extend(update)
        else:
            acc.replace(update)

    @property
    def terminal(self) -> bool:
        return self.status.state in TERMINAL_STATES

    @property
    def interrupted(self) -> bool:
        """The run ended waiting for the caller (input or auth required)."""
        return self.status.state in INTERRUPTED_STATES

    def snapshot(self, history_length: int | None = None) -> Task:
        task = Task(id=self.task_id, context_id=self.context_id, status=self.status)
        history = self.history
        if history_length is not None:
            history = history[-history_length:] if history_length > 0 else []
        task.history.extend(history)
        artifacts = task.artifacts
        for acc in self._artifacts.values():
            acc.build(artifacts.add())  # built in place: no artifact built, then copied in
        if self.metadata:
            task.metadata.CopyFrom(self.metadata)
        return task
