"""The ``trpc-python`` and ``adk`` encodings: trpc's encoding with what trpc-agent-python
and Google ADK callers need on top (registered on the seam, ``codecs/encoding.py``).

Both frameworks' clients read trpc's artifact-update stream, but each reads one thing its
own way (observed with trpc-agent-py 1.2.0 and google-adk 2.13.0, interop/python):

- **trpc-agent-python** reads a ``partial`` metadata key and takes a missing key for
  ``true``: trpc's full-text artifact would be one more partial chunk (shown twice, and
  never stored, since its session service keeps only non-partial events). Its response
  id is the ``llm_response_id`` metadata or the artifact id: a single tool result (trpc
  writes ``artifactId: ""`` and no id) would have none. So: ``partial`` on every content
  frame, and an id for id-less tool results.
- **ADK** turns an artifact update into an event that is partial unless ``lastChunk``;
  its event id follows the artifact id. Its parts must be genai's shapes
  (:mod:`~trpc_bridge.codecs.dialects.adk_parts`). So: ADK parts, and ``lastChunk: true`` on every
  complete (non-partial) response — the full text after the chunks, tool calls, results.
  Unary: ADK reads a Task's artifacts (not its history), so every message is an artifact.

The lifecycle frames (``submitted``, the closing artifact, ``completed``, errors) are
trpc's. Go callers never get these: they keep trpc-agent-go's exact bytes. Who gets which
is decided by :func:`~trpc_bridge.codecs.dialects.detect.detect_caller`.
"""

from __future__ import annotations

from collections.abc import Sequence

from a2a.types import Artifact, Message, Part, Task, TaskArtifactUpdateEvent, TaskState

from trpc_bridge.codecs.dialects.adk_parts import adk_part
from trpc_bridge.codecs.dialects.detect import ClientFramework, detect_caller
from trpc_bridge.codecs.encoding import EncodingRequest, RunFrame, RunTarget
from trpc_bridge.codecs.trpc.keys import META_RESPONSE_ID
from trpc_bridge.codecs.trpc.runs import StreamEncoder, UnaryEncoder
from trpc_bridge.events import AgentEvent
from trpc_bridge.names import new_id

#: trpc-agent-python's event flag: a JSON bool, or the strings ``"True"`` / ``"False"``
#: (its 0.3 and 1.x adapters write both).
META_PARTIAL = "partial"


def _tool_result_id(event: AgentEvent) -> str:
    return event.id or new_id("tool")


def trpc_python_frame(frame: TaskArtifactUpdateEvent, event: AgentEvent) -> None:
    """``partial`` as trpc-agent-python reads it; an id for an id-less tool result."""
    frame.metadata.update({META_PARTIAL: event.is_partial})
    if not event.id and event.is_tool_event():
        response_id = _tool_result_id(event)
        frame.artifact.artifact_id = response_id
        frame.metadata.update({META_RESPONSE_ID: response_id})
    frame.artifact.metadata.CopyFrom(frame.metadata)


def adk_frame(frame: TaskArtifactUpdateEvent, event: AgentEvent) -> None:
    """genai part shapes; a complete response closes its artifact (``lastChunk``)."""
    parts = [adk_part(p) for p in frame.artifact.parts]
    del frame.artifact.parts[:]
    frame.artifact.parts.extend(parts)
    if not event.id and event.is_tool_event():
        frame.artifact.artifact_id = _tool_result_id(event)
    if not event.is_partial:
        frame.last_chunk = True
        frame.append = False


class OverlayStreamEncoder(StreamEncoder):
    """trpc's stream encoder whose content frames are rewritten by ``rewrite``."""

    def __init__(self, run: RunTarget, caller: ClientFramework) -> None:
        super().__init__(run)
        self.text_deltas = False  # its frames are rewritten as protobuf: no TextDelta
        self._rewrite = adk_frame if caller is ClientFramework.ADK else trpc_python_frame

    def encode(self, event: AgentEvent) -> list[RunFrame]:
        frames = super().encode(event)
        for frame in frames:
            if isinstance(frame, TaskArtifactUpdateEvent) and not frame.last_chunk:
                self._rewrite(frame, event)
        return frames


_FAILED = frozenset(
    {TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED}
)


def _shows(parts: Sequence[Part]) -> bool:
    return any(not p.HasField("text") or p.text for p in parts)


class AdkUnaryEncoder(UnaryEncoder):
    """A Task whose artifacts are all the messages (ADK's client reads no history)."""

    def result(self, *, context_id: str, task_id: str) -> Message | Task:
        result = super().result(context_id=context_id, task_id=task_id)
        if isinstance(result, Message):
            parts = [adk_part(p) for p in result.parts]
            del result.parts[:]
            result.parts.extend(parts)
            return result
        if result.status.state in _FAILED:
            # ADK's client shows a failed task's status message (the error) only when
            # the task has no artifact: what the run said before it failed goes unsaid.
            del result.history[:]
            del result.artifacts[:]
            return result
        # Chunk placeholders (no content) would be empty events.
        artifacts = [
            Artifact(artifact_id=m.message_id, parts=[adk_part(p) for p in m.parts])
            for m in result.history
            if _shows(m.parts)
        ]
        artifacts += [
            Artifact(artifact_id=a.artifact_id, parts=[adk_part(p) for p in a.parts])
            for a in result.artifacts
            if _shows(a.parts)
        ]
        del result.history[:]
        del result.artifacts[:]
        result.artifacts.extend(artifacts)
        return result


class DialectEncoding:
    """trpc's encoding for the callers of one framework (``auto`` picks it by what the
    caller sends; ``--negotiation <name>`` forces it)."""

    def __init__(self, name: str, caller: ClientFramework) -> None:
        self.name = name
        self._caller = caller

    def accepts(self, request: EncodingRequest) -> bool:
        found = detect_caller(request.metadata, request.part_metadata, request.extensions)
        return found is self._caller

    def stream(self, run: RunTarget) -> StreamEncoder:
        return OverlayStreamEncoder(run, self._caller)

    def unary(self, run: RunTarget) -> UnaryEncoder:
        # trpc-agent-python's client only streams; a unary call gets trpc's answer.
        return AdkUnaryEncoder(run) if self._caller is ClientFramework.ADK else UnaryEncoder(run)


TRPC_PYTHON = DialectEncoding("trpc-python", ClientFramework.TRPC_PYTHON)
ADK = DialectEncoding("adk", ClientFramework.ADK)

__all__ = ["ADK", "TRPC_PYTHON", "AdkUnaryEncoder", "DialectEncoding", "OverlayStreamEncoder"]
