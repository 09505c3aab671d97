"""The one hot shape of a stream, before it is a protobuf: a streamed text delta.

Nearly every frame of a trpc stream is the same artifact update with another piece of
text: one text part (answer text, or reasoning with its thought metadata), the response
id as ``artifactId``, the event metadata on the update and on the artifact. Everything
but the text is shared by a response's deltas: that is a :class:`TextRun`, and a
:class:`TextDelta` is a run and a piece of text.

The stream encoder interns a run's :class:`TextRun` objects (:class:`TextRuns`, the one
template cache): deltas of one shape share one object, which keeps the protobuf template
(:meth:`TextRun.frame`) and the bytes a JSON writer makes around the text
(:attr:`TextRun.json03`, filled by :mod:`trpc_bridge.codecs.a2a.json03`). Every consumer
gets protobuf (:meth:`TextRun.frame`, the exact ``TaskArtifactUpdateEvent`` of the
general path) unless it asked for :class:`TextDelta` frames (``RunTarget.text_deltas``:
the 0.3 door, which writes them from the run's bytes); the server's aggregate and
subscribers merge the pieces of one run through :class:`TextPiece`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, NamedTuple, Protocol, Self

from a2a.types import Artifact, Part, TaskArtifactUpdateEvent

from trpc_bridge.codecs.a2a.proto_struct import fill_struct


class TextPiece(Protocol):
    """A frame that is one piece of a run of text: a consumer that falls behind may merge
    the pieces of one run into one frame (the server's subscribers do)."""

    @property
    def text(self) -> str: ...

    def continued_by(self, other: Any) -> bool:
        """``other`` (a piece of the same type) appends to this piece's run: its text may
        be merged into this one."""
        ...

    def with_text(self, text: str) -> Self:
        """This piece, carrying ``text`` instead (the merged text of several)."""
        ...


class TextRun:
    """Everything the frame of a streamed text delta holds but its text (see the module
    doc). Interned per run by :class:`TextRuns`: compare runs with :meth:`same_as`."""

    __slots__ = (
        "_next",
        "_template",
        "append",
        "artifact_id",
        "context_id",
        "json03",
        "metadata",
        "part_metadata",
        "task_id",
    )

    def __init__(
        self,
        task_id: str,
        context_id: str,
        artifact_id: str,
        append: bool,
        metadata: Mapping[str, Any],
        part_metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self.task_id = task_id
        self.context_id = context_id
        #: The LLM response id.
        self.artifact_id = artifact_id
        self.append = append
        #: The event metadata (``object_type``, ``tag``, ``llm_response_id``, …), written
        #: on the update and, as a copy, on the artifact.
        self.metadata = metadata
        #: The text part's metadata: the thought keys of reasoning, ``None`` for answer.
        self.part_metadata = part_metadata or None
        # The run that continues this one; None: this one (not a reference to itself,
        # which would make every run a cycle that only the garbage collector frees).
        self._next: TextRun | None = None if append else self._appended()
        #: What the 0.3 JSON writer keeps for this run (``json03.StreamWriter``).
        self.json03: Any = None
        self._template: TaskArtifactUpdateEvent | None = None

    def _appended(self) -> TextRun:
        run = TextRun.__new__(TextRun)
        for name in (
            "task_id",
            "context_id",
            "artifact_id",
            "metadata",
            "part_metadata",
        ):
            setattr(run, name, getattr(self, name))
        run.append = True
        run._next = None
        run.json03 = None
        run._template = None
        return run

    @property
    def continuation(self) -> TextRun:
        """The run of the deltas that continue this one (``append``, the rest the same)."""
        return self._next or self

    def same_as(self, other: TextRun) -> bool:
        """Same shape: frames of both differ in their text only."""
        return other is self or (
            other.append == self.append
            and other.artifact_id == self.artifact_id
            and other.metadata == self.metadata
            and other.part_metadata == self.part_metadata
            and other.task_id == self.task_id
            and other.context_id == self.context_id
        )

    def template(self) -> TaskArtifactUpdateEvent:
        """A delta of this run without its text: read it, never change it."""
        template = self._template
        if template is None:
            template = self._template = self._build("")
        return template

    def frame(self, text: str) -> TaskArtifactUpdateEvent:
        """The ``TaskArtifactUpdateEvent`` of a delta of this run: a copy of the run's
        template with the text set (a third of the cost of building it)."""
        update = TaskArtifactUpdateEvent()
        update.CopyFrom(self.template())
        update.artifact.parts[0].text = text
        return update

    def _build(self, text: str) -> TaskArtifactUpdateEvent:
        part = Part(text=text)
        if self.part_metadata:
            fill_struct(part.metadata, self.part_metadata)
        update = TaskArtifactUpdateEvent(
            task_id=self.task_id,
            context_id=self.context_id,
            artifact=Artifact(artifact_id=self.artifact_id, parts=[part]),
            append=self.append,
        )
        if self.metadata:
            fill_struct(update.metadata, self.metadata)
            update.artifact.metadata.CopyFrom(update.metadata)
        return update


class TextDelta(NamedTuple):
    """One streamed text delta: its run and its text (a tuple: one per event)."""

    run: TextRun
    text: str

    def to_proto(self) -> TaskArtifactUpdateEvent:
        """The ``TaskArtifactUpdateEvent`` this delta stands for."""
        return self.run.frame(self.text)

    def continued_by(self, other: TextDelta) -> bool:
        run = self.run.continuation
        return other.run is run or run.same_as(other.run)

    def with_text(self, text: str) -> TextDelta:
        return TextDelta(self.run, text)


#: Shapes a run keeps at once (a stream has a handful: answer, reasoning, first/next).
_MAX_RUNS = 64


class TextRuns:
    """One task run's :class:`TextRun` objects, interned by shape (the one template
    cache: a run's protobuf template and JSON bytes live on its object)."""

    def __init__(self, task_id: str, context_id: str) -> None:
        self.task_id = task_id
        self.context_id = context_id
        self._runs: dict[Hashable, TextRun] = {}

    def run(
        self,
        artifact_id: str,
        append: bool,
        metadata: Mapping[str, Any],
        part_metadata: Mapping[str, Any] | None,
    ) -> TextRun:
        part = tuple(part_metadata.items()) if part_metadata else None
        key = (artifact_id, tuple(metadata.items()), part)
        try:
            run = self._runs.get(key)
        except TypeError:  # a dict in the metadata (a state delta): rare, not interned
            return TextRun(
                self.task_id,
                self.context_id,
                artifact_id,
                append,
                metadata,
                part_metadata,
            )
        if run is None:
            if len(self._runs) >= _MAX_RUNS:
                self._runs.clear()
            run = self._runs[key] = TextRun(
                self.task_id,
                self.context_id,
                artifact_id,
                False,
                metadata,
                part_metadata,
            )
        return run.continuation if append else run
