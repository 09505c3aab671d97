"""Frames of other dialects rewritten into trpc's, before the trpc decoder reads them:
the answer once, under one id per response, whoever sent it.

What is rewritten (each recorded from the framework itself, ``tests/vectors/TP*``,
``TV*``, ``AD*``; the plain-A2A cases against a2a-sdk servers, tests/client):

- **trpc-agent-python**'s closing ``lastChunk`` artifact (new artifact id, metadata
  ``{"partial": false}``, the full text) becomes the complete response of the pieces it
  consolidates (trpc's own ``chat.completion``), under their response id.
- **Google ADK**'s ``working`` status messages (each event of its legacy executor) become
  artifact updates under the response id ADK carries (``adk_custom_metadata`` /
  ``adk_event_id``): pieces as chunks, the full-text message as the complete response;
  the final artifact repeating it is dropped.
- **Plain A2A**: ``append: false`` on an artifact id already seen replaces that
  artifact's text (one complete response, not one more delta); text streamed in status
  messages and then sent whole as an artifact is one answer; a status message from the
  ``user`` (a server echoing the request in its ``submitted`` status) is not output.
- **ADK**'s error: a ``working`` message with ``adk_error_code`` is the run's failure.
- **trpc-agent-python**'s error: an agent message with ``error_code`` metadata (and no
  failed status) is the run's failure.

trpc's own frames (those with ``object_type`` metadata) pass unchanged, so Go callers and
the Go vectors see exactly what they saw before; their text is only recorded, so that a
later consolidating frame finds the response it belongs to.

:func:`normalise_task` does the same for a unary result (a Task whose history and
artifacts lost their metadata on the way through a task store).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from trpc_bridge.codecs.a2a.frames import (
    FAILURE_STATES,
    ArtifactFrame,
    Frame,
    StatusFrame,
    TaskFrame,
    WireArtifact,
    WireMessage,
    WirePart,
    as_str,
)
from trpc_bridge.codecs.dialects.text import FinalText, ResponseIds, Seen, partial_flag
from trpc_bridge.codecs.trpc.keys import (
    ADK_PREFIX,
    ERROR_KEYS,
    META_ERROR_CODE,
    META_ERROR_MESSAGE,
    META_OBJECT_TYPE,
    META_RESPONSE_ID,
    PART_THOUGHT,
)
from trpc_bridge.events import ObjectType

#: Status states whose message is progress (not the run's end, not a question).
_PROGRESS = frozenset({"submitted", "working"})
#: ADK's error event metadata (its message text is the error message).
ADK_ERROR_CODE = "adk_error_code"


def _is_thought(part: WirePart) -> bool:
    return (
        part.metadata.get(PART_THOUGHT) is True
        or part.metadata.get(ADK_PREFIX + PART_THOUGHT) is True
    )


def _texts(parts: tuple[WirePart, ...]) -> tuple[str, str, bool]:
    """(text, reasoning, only text parts?) of some parts."""
    text = "".join(p.text for p in parts if p.kind == "text" and not _is_thought(p))
    thought = "".join(p.text for p in parts if p.kind == "text" and _is_thought(p))
    return text, thought, all(p.kind == "text" for p in parts)


def _merged(*maps: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in maps:
        out.update(m)
    return out


@dataclass
class DialectFrames:
    """Rewrites the frames of one stream (keep one per stream)."""

    _ids: ResponseIds = field(default_factory=ResponseIds)
    _text: FinalText = field(default_factory=FinalText)
    #: artifact id → the response it carries.
    _artifacts: dict[str, str] = field(default_factory=dict)
    #: task id → the response its plain status messages stream.
    _status_keys: dict[str, str] = field(default_factory=dict)

    def frames(self, frame: Frame) -> list[Frame]:
        if isinstance(frame, WireMessage):
            return [error_message_as_failure(frame, self._text.last)]
        if isinstance(frame, StatusFrame):
            return self._status(frame)
        if isinstance(frame, ArtifactFrame):
            return self._artifact(frame)
        return [frame]

    # --- status messages --------------------------------------------------------------

    def _status(self, frame: StatusFrame) -> list[Frame]:
        message = frame.message
        if frame.state in FAILURE_STATES:
            return [self._failure(frame)]
        if message is None or not message.parts:
            return [frame]
        if message.role == "user":
            return [replace(frame, message=None)]
        merged = _merged(message.metadata, frame.metadata)
        if frame.state not in _PROGRESS or merged.get(META_OBJECT_TYPE):
            return [frame]
        key = self._ids.read(merged) or self._status_keys.setdefault(
            frame.task_id, message.message_id
        )
        if as_str(merged.get(ADK_ERROR_CODE)):
            return [_adk_failure(frame, message, merged, key)]
        bare = replace(frame, message=None)
        text, thought, text_only = _texts(message.parts)
        if not text_only:  # tool calls / results / code: one complete message each
            return [bare, self._as_artifact(frame, key, message.parts, None)]
        seen = self._seen(key, text, thought, unmarked=True)
        if seen is Seen.REPEAT:
            return [bare]
        return [bare, self._as_artifact(frame, key, message.parts, seen)]

    def _failure(self, frame: StatusFrame) -> StatusFrame:
        """A failed run (not trpc's: its error carries ``object_type``) fails the
        response in progress: the error goes under that response's id."""
        metadata = _merged(frame.message.metadata if frame.message else {}, frame.metadata)
        if metadata.get(META_OBJECT_TYPE) or metadata.get(META_RESPONSE_ID):
            return frame
        # the id its dialect names (ADK's adk_custom_metadata), else the last response's
        key = self._ids.read(metadata) or self._text.last
        if key is None:
            return frame
        return replace(frame, metadata={**frame.metadata, META_RESPONSE_ID: key})

    def _seen(self, key: str, text: str, thought: str, *, unmarked: bool) -> Seen:
        """Classify a text-only unit's text (its reasoning when it has no text)."""
        if text:
            return self._text.piece(key, text, unmarked=unmarked)
        return self._text.piece(key + "\x00thought", thought, unmarked=unmarked)

    def _as_artifact(
        self, frame: StatusFrame, key: str, parts: tuple[WirePart, ...], seen: Seen | None
    ) -> ArtifactFrame:
        metadata: dict[str, Any] = {META_RESPONSE_ID: key}
        if seen is Seen.PIECE:
            metadata[META_OBJECT_TYPE] = ObjectType.CHUNK
        elif seen is not None:
            metadata[META_OBJECT_TYPE] = ObjectType.COMPLETION
        self._artifacts[key] = key
        return ArtifactFrame(
            task_id=frame.task_id,
            context_id=frame.context_id,
            artifact=WireArtifact(artifact_id=key, parts=parts, metadata={}),
            metadata=metadata,
            last_chunk=False,
            append=False,
        )

    # --- artifacts --------------------------------------------------------------------

    def _artifact(self, frame: ArtifactFrame) -> list[Frame]:
        artifact = frame.artifact
        merged = _merged(artifact.metadata, frame.metadata)
        seen_before = artifact.artifact_id in self._artifacts
        key = (
            self._ids.read(merged)
            or self._artifacts.get(artifact.artifact_id)
            or artifact.artifact_id
        )
        self._artifacts[artifact.artifact_id] = key
        text, thought, text_only = _texts(artifact.parts)
        object_type = merged.get(META_OBJECT_TYPE)
        if object_type or not text_only or not (text or thought):
            self._record(key, text, object_type)
            return [frame]
        if seen_before and frame.append:
            self._text.piece(key, text)
            return [_keyed(frame, key)]
        owner = None if seen_before else self._text.owner(text)
        if owner is None and not seen_before and partial_flag(merged) is not False:
            self._text.piece(key, text)  # the first chunk of a new artifact
            return [_keyed(frame, key)]
        target = owner or key
        seen = self._text.whole(target, text, replaces=seen_before)
        if seen is Seen.REPEAT:
            return []
        metadata = {**frame.metadata, META_RESPONSE_ID: target}
        metadata[META_OBJECT_TYPE] = ObjectType.COMPLETION
        self._artifacts[target] = target
        return [
            replace(
                frame,
                artifact=replace(artifact, artifact_id=target),
                metadata=metadata,
                append=False,
            )
        ]

    def _record(self, key: str, text: str, object_type: Any) -> None:
        """Keep what trpc's frames showed, for consolidating frames that follow."""
        if not text:
            return
        if object_type == ObjectType.CHUNK:
            self._text.piece(key, text)
        elif object_type == ObjectType.COMPLETION:
            self._text.whole(key, text)


def _keyed(frame: ArtifactFrame, key: str) -> ArtifactFrame:
    """A text piece under its response's id: the one its dialect names (ADK for
    TypeScript streams an artifact of its own id, its ``adk_custom_metadata`` naming the
    response), which the complete text that follows is given too."""
    if key == frame.artifact.artifact_id or frame.metadata.get(META_RESPONSE_ID) == key:
        return frame
    return replace(frame, metadata={**frame.metadata, META_RESPONSE_ID: key})


def _adk_failure(
    frame: StatusFrame, message: WireMessage, merged: Mapping[str, Any], key: str
) -> StatusFrame:
    """ADK sends a model error as one more ``working`` message (text = the error message,
    ``adk_error_code``) before its ``failed`` status: it is the run's failure."""
    text, _, _ = _texts(message.parts)
    metadata = {
        **merged,
        META_ERROR_CODE: as_str(merged.get(ADK_ERROR_CODE)),
        META_ERROR_MESSAGE: text,
        META_RESPONSE_ID: key,
    }
    return replace(frame, state="failed", message=message, metadata=metadata)


def error_message_as_failure(frame: Frame, response_id: str | None = None) -> Frame:
    """trpc-agent-python reports a run's error as an agent message carrying
    ``error_code`` (no failed status follows, and the stream ends): that message is the
    run's failure, not one more answer — of the response in progress, if there is one."""
    if not isinstance(frame, WireMessage) or frame.role == "user":
        return frame
    if not any(as_str(frame.metadata.get(key)) for key in ERROR_KEYS):
        return frame
    metadata = dict(frame.metadata)
    if response_id and not metadata.get(META_RESPONSE_ID):
        metadata[META_RESPONSE_ID] = response_id
    return StatusFrame(task_id="", context_id="", state="failed", message=frame, metadata=metadata)


# --- unary results ------------------------------------------------------------------------


def _text_pair(parts: tuple[WirePart, ...]) -> tuple[str, str] | None:
    """(text, reasoning) of text-only parts that show something, else None."""
    text, thought, text_only = _texts(parts)
    return (text, thought) if text_only and (text or thought) else None


def _ends_with(whole: tuple[str, str], piece: tuple[str, str]) -> bool:
    return whole[0].endswith(piece[0]) and whole[1].endswith(piece[1])


def _collapse_history(
    history: tuple[WireMessage, ...],
) -> tuple[list[WireMessage], set[tuple[str, str]]]:
    """Agent text pieces followed by their whole (ADK's history) → the whole once, under
    the first piece's id. Returns the history and the (text, reasoning) it shows."""
    out: list[WireMessage] = []
    run: list[tuple[WireMessage, tuple[str, str]]] = []  # consecutive agent text messages
    for message in history:
        pair = _text_pair(message.parts) if message.role != "user" else None
        if pair is None:
            out += [m for m, _ in run]
            run = []
            out.append(message)
            continue
        joined = ("".join(p[0] for _, p in run), "".join(p[1] for _, p in run))
        if run and joined == pair:
            out.append(replace(message, message_id=run[0][0].message_id))
            run = []
            continue
        run.append((message, pair))
    out += [m for m, _ in run]
    shown = {p for m in out if m.role != "user" and (p := _text_pair(m.parts))}
    return out, shown


def _clean_artifacts(
    artifacts: tuple[WireArtifact, ...], shown: set[tuple[str, str]]
) -> list[WireArtifact]:
    """Drop texts the history showed; a text artifact followed by one that ends with its
    text is a streamed remnant (trpc-agent-python's last chunk): keep the whole under the
    remnant's id, which is the response id."""
    out: list[WireArtifact] = []
    for artifact in artifacts:
        pair = _text_pair(artifact.parts)
        if pair is not None and pair in shown:
            continue
        previous = _text_pair(out[-1].parts) if out else None
        if pair is not None and previous is not None and _ends_with(pair, previous):
            out[-1] = replace(artifact, artifact_id=out[-1].artifact_id)
            continue
        out.append(artifact)
    return out


def normalise_task(frame: Frame) -> Frame:
    """A unary result with each answer once (see the module docstring)."""
    if not isinstance(frame, TaskFrame):
        return error_message_as_failure(frame)
    history, shown = _collapse_history(frame.history)
    failure = _text_pair(frame.status_message.parts) if frame.status_message else None
    if frame.state in FAILURE_STATES and failure is not None:
        # ADK keeps its error message in the history too: the failed status says it.
        history = [m for m in history if _text_pair(m.parts) != failure]
    artifacts = _clean_artifacts(frame.artifacts, shown)
    return replace(frame, history=tuple(history), artifacts=tuple(artifacts))


__all__ = ["DialectFrames", "normalise_task"]
