"""What trpc-agent-python and Google ADK callers need on top of trpc's stream encoding.

Both frameworks' clients read trpc's artifact-update stream, but each reads one thing its
own way (observed with trpc-agent-py 1.2.0 and google-adk 2.13.0, interop/python):

- **trpc-agent-python** reads a ``partial`` metadata key and takes a missing key for
  ``true``: trpc's full-text artifact would be one more partial chunk (shown twice, and
  never stored, since its session service keeps only non-partial events). Its response
  id is the ``llm_response_id`` metadata or the artifact id: a single tool result (trpc
  writes ``artifactId: ""`` and no id) would have none. So: ``partial`` on every frame,
  and an id for id-less tool results.
- **ADK** turns an artifact update into an event that is partial unless ``lastChunk``;
  its event id follows the artifact id. Its parts must be genai's shapes
  (:mod:`~trpc_bridge.codecs.adk_parts`). So: ADK parts, and ``lastChunk: true`` on every
  complete (non-partial) response — the full text after the chunks, tool calls, results.

:class:`OverlayStreamEncoder` wraps a trpc :class:`StreamEncoder` and rewrites its frames;
the lifecycle frames (``submitted``, the closing empty artifact, ``completed``, errors)
pass unchanged. Go callers never get an overlay: they keep trpc-agent-go's exact bytes.
"""

from __future__ import annotations

import uuid
from enum import Enum

from a2a.types import TaskArtifactUpdateEvent, TaskStatusUpdateEvent

from trpc_bridge.codecs.adk_parts import adk_part
from trpc_bridge.codecs.dialect_text import META_PARTIAL
from trpc_bridge.codecs.trpc_encode import StreamEncoder, StreamFrame
from trpc_bridge.codecs.trpc_keys import META_RESPONSE_ID
from trpc_bridge.events import AgentEvent


class Dialect(Enum):
    TRPC_PYTHON = "trpc-python"
    ADK = "adk"


def _tool_result_id(event: AgentEvent) -> str:
    return event.id or f"tool-{uuid.uuid4()}"


def trpc_python_frame(frame: TaskArtifactUpdateEvent, event: AgentEvent) -> None:
    """``partial`` as trpc-agent-python reads it; an id for an id-less tool result."""
    frame.metadata.update({META_PARTIAL: event.is_partial})
    if not frame.artifact.artifact_id and frame.artifact.parts:
        response_id = _tool_result_id(event)
        frame.artifact.artifact_id = response_id
        frame.metadata.update({META_RESPONSE_ID: response_id})
    if frame.artifact.HasField("metadata"):
        frame.artifact.metadata.CopyFrom(frame.metadata)


def adk_frame(frame: TaskArtifactUpdateEvent, event: AgentEvent) -> None:
    """genai part shapes; a complete response closes its artifact (``lastChunk``)."""
    parts = [adk_part(p) for p in frame.artifact.parts]
    del frame.artifact.parts[:]
    frame.artifact.parts.extend(parts)
    if not frame.artifact.artifact_id and parts:
        frame.artifact.artifact_id = _tool_result_id(event)
    if not event.is_partial:
        frame.last_chunk = True
        frame.append = False


class OverlayStreamEncoder:
    """A trpc stream encoder whose content frames are rewritten for ``dialect``."""

    def __init__(self, inner: StreamEncoder, dialect: Dialect) -> None:
        self.inner = inner
        self.dialect = dialect

    @property
    def done(self) -> bool:
        return self.inner.done

    def start(self, *, app_name: str, user_id: str) -> TaskStatusUpdateEvent:
        return self.inner.start(app_name=app_name, user_id=user_id)

    def encode(self, event: AgentEvent) -> list[StreamFrame]:
        frames = self.inner.encode(event)
        rewrite = trpc_python_frame if self.dialect is Dialect.TRPC_PYTHON else adk_frame
        for frame in frames:
            if isinstance(frame, TaskArtifactUpdateEvent) and not frame.last_chunk:
                rewrite(frame, event)
        return frames

    def close(self) -> list[StreamFrame]:
        return self.inner.close()


__all__ = ["Dialect", "OverlayStreamEncoder", "adk_frame", "trpc_python_frame"]
