"""A streamed A2A answer → events, one :class:`StreamDecoder` per stream
(``docs/specs/trpc-interaction.md`` §4.2–§4.4), including the rule consumers rely on: a non-partial
event carries the *complete* message of its response id, so the Go v0 server's re-sent
final text is never shown twice."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from a2a.types import StreamResponse

from trpc_bridge.codecs.a2a.frames import (
    FAILURE_STATES,
    TERMINAL_STATES,
    ArtifactFrame,
    Frame,
    StatusFrame,
    WireMessage,
    merged,
    read_result,
)
from trpc_bridge.codecs.a2a.proto_frames import read_proto
from trpc_bridge.codecs.trpc.decode.parts import DataPartMapper, has_content
from trpc_bridge.codecs.trpc.decode.units import (
    NO_MESSAGE,
    EventFactory,
    Unit,
    artifact_unit,
    has_response_metadata,
    has_text,
    message_unit,
    status_unit,
    task_units,
    text_message,
    tool_call_message,
)
from trpc_bridge.codecs.trpc.keys import META_OBJECT_TYPE
from trpc_bridge.events import AgentEvent, Choice, ObjectType

#: What an artifact update (0.3 JSON) may hold to be a bare update (:func:`bare_update_type`).
_BARE_RESULT_KEYS = frozenset(
    {"kind", "taskId", "contextId", "artifact", "metadata", "lastChunk", "append"}
)
_BARE_ARTIFACT_KEYS = frozenset({"artifactId", "parts"})
_PREPROCESSING = "preprocessing."


def bare_update_type(result: Any) -> str | None:
    """The ``object_type`` of a *bare update* in A2A 0.3 JSON, else None: trpc's
    ``preprocessing.*`` frame, an ``artifact-update`` of its task and context whose artifact
    has an empty id and no parts (``null`` or ``[]``), nothing else on it or on the
    update (no ``append``, no ``lastChunk``) and metadata of that one string. trpc-agent-go
    writes one at each step of an LLM call's preparation: half the frames of a tool call's
    stream (``docs/specs/trpc-interaction.md`` §0.4)."""
    if type(result) is not dict or result.get("kind") != "artifact-update":
        return None
    metadata = result.get("metadata")
    if type(metadata) is not dict or len(metadata) != 1:
        return None
    object_type = metadata.get(META_OBJECT_TYPE)
    if type(object_type) is not str or not object_type.startswith(_PREPROCESSING):
        return None
    artifact = result.get("artifact")
    if (
        type(artifact) is not dict
        or artifact.get("artifactId") != ""
        or "parts" not in artifact
        or artifact["parts"] not in (None, [])
        or not _BARE_ARTIFACT_KEYS.issuperset(artifact)
        or not _BARE_RESULT_KEYS.issuperset(result)
        or type(result.get("taskId")) is not str
        or type(result.get("contextId")) is not str
        or result.get("lastChunk", False) is not False
        or result.get("append", False) is not False
    ):
        return None
    return object_type


@dataclass
class _Pieces:
    """Text and reasoning streamed so far under one response id."""

    text: str = ""
    reasoning: str = ""


class StreamDecoder:
    """Decodes one A2A stream into events. Keep one per stream.

    State: the task id/context id and last task state seen (so the caller can cancel the
    task, recover with ``tasks/get``, or report a stream that ended too early), and the
    text streamed per response id (to recognise the Go v0 server's re-sent final text).
    """

    def __init__(
        self,
        *,
        mappers: Sequence[DataPartMapper] = (),
        invocation_id: str = "",
        author: str = "",
    ) -> None:
        self._mappers = tuple(mappers)
        self._factory = EventFactory(invocation_id, author)
        self._pieces: dict[str, _Pieces] = {}
        self._seen_artifacts: set[str] = set()
        self.task_id = ""
        self.context_id = ""
        #: Last task state seen (0.3 spelling), ``""`` before any task frame.
        self.state = ""
        #: True once a terminal state or a terminal error was decoded.
        self.finished = False

    @property
    def saw_task(self) -> bool:
        return bool(self.state)

    def feed_proto(self, response: StreamResponse) -> list[AgentEvent]:
        return self.feed(read_proto(response))

    def feed(self, result: Any) -> list[AgentEvent]:
        """Events for one streamed result. Raises only :class:`CodecError` (unrecognisable
        result); the caller should skip such a frame, as trpc's client does."""
        return self._decode(read_result(result))

    def _decode(self, frame: Frame) -> list[AgentEvent]:
        if self.finished:
            return []  # trpc stops at a terminal error; nothing follows a terminal state
        events = [self._event(unit) for unit in self._units(frame)]
        for event in events:
            if event.is_terminal_error():
                self.finished = True
                break
        return events

    def bare_type(self, result: Any) -> str | None:
        """The ``object_type`` of ``result`` when it is a bare update
        (:func:`bare_update_type`) whose decoding would be one event of that type without
        content, id, tag or error, and change nothing in this decoder (call
        :meth:`absorb_bare` instead of :meth:`feed`) but note its unnamed artifact: the
        update's task and context are the ones followed, already working and not finished.
        None: :meth:`feed` it."""
        object_type = bare_update_type(result)
        if object_type is None or not self._follows_bare(result):
            return None
        return object_type

    def _follows_bare(self, result: dict[str, Any]) -> bool:
        """Decoding the bare update ``result`` would change nothing here."""
        return (
            not self.finished
            and bool(self.state)
            and result["taskId"] == self.task_id
            and result["contextId"] == self.context_id
        )

    def absorb_bare(self) -> None:
        """What :meth:`feed` would leave of the bare update :meth:`bare_type` named: its
        unnamed artifact seen (a dialect decoder also notes its unit)."""
        self._seen_artifacts.add("")

    def ended_early(self) -> bool:
        """The stream showed a task but ended before the task reached an end state."""
        return self.saw_task and not self.finished

    # --- frames → units ---------------------------------------------------------------

    def _track(self, task_id: str, context_id: str, state: str) -> None:
        self.task_id = task_id or self.task_id
        self.context_id = context_id or self.context_id
        if state:
            self.state = state
            self.finished = self.finished or state in TERMINAL_STATES

    def _units(self, frame: Frame) -> list[Unit]:
        mappers = self._mappers
        if isinstance(frame, ArtifactFrame):  # most frames of a stream
            artifact = frame.artifact
            self._track(frame.task_id, frame.context_id, self.state or "working")
            self._seen_artifacts.add(artifact.artifact_id)
            metadata = merged(artifact.metadata, frame.metadata)
            keep = has_content(artifact.parts) or has_response_metadata(metadata)
            # Go v0 drops every lastChunk frame, with the llm_response_id / state_delta the
            # server put there; only empty frames without response metadata are noise.
            return [artifact_unit(frame, mappers, metadata)] if keep else []
        if isinstance(frame, WireMessage):
            return [message_unit(frame, mappers)]
        if isinstance(frame, StatusFrame):
            units = self._status_units(frame)
            self._track(frame.task_id, frame.context_id, frame.state)
            return units
        units = task_units(frame, mappers, history=False, seen_artifacts=self._seen_artifacts)
        self._track(frame.task_id, frame.context_id, frame.state)
        return units

    def _status_units(self, frame: StatusFrame) -> list[Unit]:
        message = frame.message or NO_MESSAGE
        metadata = merged(message.metadata, frame.metadata)
        failure = frame.state in FAILURE_STATES
        # Go v0 drops working / input-required / completed statuses even with content.
        if failure or has_content(message.parts) or has_response_metadata(metadata):
            return [status_unit(frame, message, self._mappers)]
        return []

    # --- units → events ---------------------------------------------------------------

    def _event(self, unit: Unit) -> AgentEvent:
        factory = self._factory
        error_event = factory.error_event(unit)
        if error_event is not None:
            return error_event
        content = unit.content
        if content.tool_calls:
            return self._tool_call_event(unit)
        if content.tool_responses:
            choices = [Choice(index=i, message=m) for i, m in enumerate(content.tool_responses)]
            if has_text(content):  # Go v0 loses text that comes with tool results
                choices.append(Choice(index=len(choices), message=text_message(unit.role, content)))
            return factory.new(unit, ObjectType.TOOL_RESPONSE, choices)
        if content.code is not None or content.code_result is not None:
            # Go v0 turns code into a partial delta; trpc agents emit it as a full message.
            return factory.new(
                unit,
                unit.meta.object_type or ObjectType.CODE_EXECUTION,
                [Choice(message=text_message(unit.role, content))],
            )
        if unit.meta.object_type == ObjectType.COMPLETION:
            return self._completing_event(unit)
        return self._delta_event(unit)

    def _tool_call_event(self, unit: Unit) -> AgentEvent:
        message = tool_call_message(unit.content)
        pieces = self._pieces.pop(unit.event_id, None)
        if pieces is not None and not (message.content or message.reasoning_content):
            # The Go server drops the text an LLM wrote next to its tool calls, but it
            # streamed it first under the same id: restore the complete response.
            message.content = pieces.text
            message.reasoning_content = pieces.reasoning
        return self._factory.new(unit, ObjectType.COMPLETION, [Choice(message=message)])

    def _completing_event(self, unit: Unit) -> AgentEvent:
        """A non-partial ``chat.completion`` text frame: the complete response.

        The Go v0 server re-sends the full text after its deltas (Go v0's client then
        shows it twice); trpc's v1 server sends the frame with no parts. Either way the
        event carries the complete text in ``message`` and no ``delta``.
        """
        pieces = self._pieces.pop(unit.event_id, None)
        message = text_message(unit.role, unit.content)
        if pieces is not None:
            message.content = message.content or pieces.text
            message.reasoning_content = message.reasoning_content or pieces.reasoning
        return self._factory.new(unit, ObjectType.COMPLETION, [Choice(message=message)])

    def _delta_event(self, unit: Unit) -> AgentEvent:
        content = unit.content
        object_type = unit.meta.object_type or ObjectType.CHUNK
        graph_done = object_type == ObjectType.GRAPH_EXECUTION
        if object_type == ObjectType.CHUNK and (content.text or content.reasoning):
            pieces = self._pieces.get(unit.event_id)
            if pieces is None:
                pieces = self._pieces[unit.event_id] = _Pieces()
            pieces.text += content.text
            pieces.reasoning += content.reasoning
        return self._factory.new(
            unit,
            object_type,
            [Choice(delta=text_message(unit.role, content))],
            is_partial=not graph_done,
            done=graph_done,
        )


def decode_stream(
    results: Iterable[Any], *, mappers: Sequence[DataPartMapper] = ()
) -> list[AgentEvent]:
    """All events of a complete stream (a convenience for tests and replays)."""
    decoder = StreamDecoder(mappers=mappers)
    return [event for result in results for event in decoder.feed(result)]
