"""The one hot shape of a stream, before it is a protobuf: a streamed text delta.

Nearly every frame of a trpc stream is the same artifact update with another piece of
text: one text part (answer text, or reasoning with its thought metadata), the response
id as ``artifactId``, the event metadata on the update and on the artifact. Building that
as a2a-sdk protobuf and reading it back to write JSON is most of a frame's cost, so the
stream encoder can emit a :class:`TextDelta` instead (``RunTarget.text_deltas``): the
server aggregates and fans it out as is, a door that writes JSON itself writes it from
these fields (:mod:`trpc_bridge.codecs.a2a.json03`), and :meth:`TextDelta.to_proto` gives
the exact ``TaskArtifactUpdateEvent`` the protobuf path would have built, for every other
consumer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from a2a.types import Artifact, Part, TaskArtifactUpdateEvent

from trpc_bridge.codecs.a2a.proto_struct import fill_struct


class TextDelta(NamedTuple):
    """One streamed text delta (a tuple: cheap to make, one per event)."""

    task_id: str
    context_id: str
    #: The LLM response id.
    artifact_id: str
    text: str
    append: bool
    #: The event metadata (``object_type``, ``tag``, ``llm_response_id``, …), written on
    #: the update and, as a copy, on the artifact.
    metadata: Mapping[str, Any]
    #: The text part's metadata: the thought keys of reasoning, ``None`` for answer text.
    part_metadata: Mapping[str, Any] | None = None

    def to_proto(self) -> TaskArtifactUpdateEvent:
        """The ``TaskArtifactUpdateEvent`` this delta stands for."""
        part = Part(text=self.text)
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

    def shape(self) -> tuple[Any, ...]:
        """Everything but the text, hashable (``TypeError`` when the metadata holds a
        dict, such as a state delta): deltas of one shape differ in their text only."""
        part = tuple(self.part_metadata.items()) if self.part_metadata else None
        key = (self.artifact_id, self.append, tuple(self.metadata.items()), part)
        hash(key)
        return key

    def continued_by(self, other: TextDelta) -> bool:
        """``other`` appends to the same text run: its text may be merged into this one."""
        return (
            other.append
            and other.artifact_id == self.artifact_id
            and other.metadata == self.metadata
            and other.part_metadata == self.part_metadata
        )
