"""Relaying trpc's streamed text deltas from an upstream in the caller's own encoding.

When the caller of a streamed run gets trpc's encoding on the A2A 0.3 wire and the agent
is a :class:`~trpc_bridge.client.RemoteAgent` streaming the same (``trpc-bridge proxy``
in front of trpc-agent-go), nearly every upstream frame is a text delta the bridge would
write again with only its ids changed: the proxy's task, context and response ids, its
``append``, its metadata layout. Decoding each into an event and encoding it back is most
of a proxied frame's cost. A :class:`Relay` skips that for those frames, and only them:

- every result the run's decoder does not get from it is decoded and encoded as usual;
- a text delta (:func:`hot_delta`: an ``artifact-update`` of one text part with
  ``object_type`` ``chat.completion.chunk`` and no other metadata than its response id
  and tag; reasoning only when no redaction policy is installed, since the runner masks
  thinking text by its content) is keyed by everything in it but its text.
  A key's frames go the usual way until two in a row came out as one frame each,
  carrying their text and differing in nothing else; from then on a frame of that key
  is that output with its own text, published to the live task at once, without being
  decoded or encoded;
- before the decoder reads anything else it absorbs results standing for the relayed
  ones (one per run of consecutive relayed frames of a key, their texts joined): the
  text it collects per response id, the task it follows and the state it keeps are then
  what they would have been (:mod:`~trpc_bridge.client.passthrough`). The encoder's state
  needs nothing: a relayed key's response id is already one it has written.

The output is the event path's, byte for byte (``tests/server/test_relay_equivalence.py``
runs both on the Go peer's streams and on generated ones). Runs on other wires or
encodings, with tfrs progress, or to other agents take the event path.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
from a2a.types import TaskArtifactUpdateEvent

from trpc_bridge import redaction
from trpc_bridge.agent import Agent
from trpc_bridge.client.remote_agent import RemoteAgent
from trpc_bridge.codecs.a2a.text_delta import TextDelta
from trpc_bridge.codecs.encoding import StreamEncoding, StreamFrame
from trpc_bridge.codecs.trpc.keys import META_OBJECT_TYPE, META_RESPONSE_ID, META_TAG
from trpc_bridge.codecs.trpc.runs import StreamEncoder
from trpc_bridge.events import AgentEvent, AgentRequest, ObjectType
from trpc_bridge.server.tasks.live_task import LiveTask
from trpc_bridge.telemetry.metrics import RunMeter

#: Keys a relay remembers at once (a stream has a handful: answer and reasoning text per
#: response); past it they are forgotten and learnt again.
_MAX_KEYS = 64
#: Relayed texts kept per run of a key before they are joined (memory stays linear in
#: the text, not in the number of frames).
_MAX_PIECES = 256


#: The response metadata a relayed delta may carry (an error, a state delta: decoded).
_DELTA_KEYS = frozenset({META_OBJECT_TYPE, META_RESPONSE_ID, META_TAG})


def _plain_metadata(metadata: Any) -> bool:
    return type(metadata) is dict and _DELTA_KEYS.issuperset(metadata)


def hot_delta(result: Any, *, marked_parts: bool) -> tuple[bytes, str] | None:
    """``(key, text)`` of trpc's streamed text delta in A2A 0.3 JSON: the key is the
    result's JSON without the text. None for anything else. ``marked_parts``: a part
    with metadata (reasoning) may be relayed; without, only answer text is (thinking is
    masked by the runner's redaction, text by text)."""
    if type(result) is not dict or result.get("kind") != "artifact-update":
        return None
    metadata = result.get("metadata")
    if type(metadata) is not dict or metadata.get(META_OBJECT_TYPE) != ObjectType.CHUNK:
        return None
    if not _DELTA_KEYS.issuperset(metadata):
        return None
    artifact = result.get("artifact")
    if type(artifact) is not dict or not _plain_metadata(artifact.get("metadata", {})):
        return None
    parts = artifact.get("parts")
    if type(parts) is not list or len(parts) != 1 or type(parts[0]) is not dict:
        return None
    part = parts[0]
    text = part.get("text")
    if type(text) is not str or not text or (part.get("metadata") and not marked_parts):
        return None
    part["text"] = ""
    try:
        key = orjson.dumps(result)
    except orjson.JSONEncodeError:  # an integer past 64 bits, a lone surrogate: not relayed
        return None
    finally:
        part["text"] = text
    return key, text


def _text_of(frame: StreamFrame) -> str | None:
    """The text of a frame that is one text part, else None."""
    if isinstance(frame, TextDelta):
        return frame.text
    if isinstance(frame, TaskArtifactUpdateEvent) and len(frame.artifact.parts) == 1:
        part = frame.artifact.parts[0]
        return part.text if part.WhichOneof("content") == "text" else None
    return None


def _with_text(frame: StreamFrame, text: str) -> StreamFrame:
    """``frame`` (one text part, :func:`_text_of`) carrying ``text`` instead."""
    if isinstance(frame, TextDelta):
        return frame._replace(text=text)
    assert isinstance(frame, TaskArtifactUpdateEvent)
    update = TaskArtifactUpdateEvent()
    update.CopyFrom(frame)
    update.artifact.parts[0].text = text
    return update


def _standing(result: dict[str, Any], text: str) -> dict[str, Any]:
    """``result`` (a :func:`hot_delta`) carrying ``text`` instead; ``result`` unchanged."""
    artifact = result["artifact"]
    part = {**artifact["parts"][0], "text": text}
    return {**result, "artifact": {**artifact, "parts": [part]}}


class _Recording:
    """The run's encoder, noting its frames while :attr:`frames` is a list."""

    def __init__(self, encoder: StreamEncoder) -> None:
        self.inner = encoder
        self.done = encoder.done
        self.frames: list[StreamFrame] | None = None

    def start(self, *, app_name: str, user_id: str) -> list[StreamFrame]:
        return self.inner.start(app_name=app_name, user_id=user_id)

    def encode(self, event: AgentEvent) -> list[StreamFrame]:
        frames = self.inner.encode(event)
        self.done = self.inner.done
        if self.frames is not None:
            self.frames.extend(frames)
        return frames

    def close(self) -> list[StreamFrame]:
        frames = self.inner.close()
        self.done = self.inner.done
        return frames


class Relay:
    """One streamed run relayed (see the module doc): the encoder its live task drives
    (:attr:`encoder`) and the :class:`~trpc_bridge.client.passthrough.Passthrough` its
    agent's stream is given (:meth:`events`)."""

    def __init__(
        self, agent: RemoteAgent, live: LiveTask, encoder: StreamEncoder, *, reasoning: bool
    ) -> None:
        self._agent = agent
        self._live = live
        #: Reasoning deltas may be relayed (no redaction policy masks them).
        self._reasoning = reasoning
        self.encoder = _Recording(encoder)
        #: key → the frame its deltas are copies of; None: not relayed.
        self._templates: dict[bytes, StreamFrame | None] = {}
        #: key → its last output without the text, until it has a template.
        self._shapes: dict[bytes, StreamFrame] = {}
        #: key → a result of that key (for the standing results).
        self._results: dict[bytes, dict[str, Any]] = {}
        #: The delta being decoded now, whose output is being recorded.
        self._decoding: tuple[bytes, str, dict[str, Any]] | None = None
        #: Runs of consecutive relayed deltas: (key, their texts).
        self._taken: list[tuple[bytes, list[str]]] = []
        #: The run's metrics (set by the runner): each relayed delta is noted there.
        self.meter: RunMeter | None = None

    def events(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        """The agent's events for ``request``: those of the results not relayed."""
        return self._agent.run(request, passthrough=self)

    def take(self, result: Any) -> bool:
        self._learn()
        hot = hot_delta(result, marked_parts=self._reasoning)
        if hot is None:
            return False
        key, text = hot
        if key not in self._templates:
            self._decoding = (key, text, result)
            self.encoder.frames = []
            return False
        template = self._templates[key]
        if template is None:
            return False
        self._live.publish(_with_text(template, text))
        if self.meter is not None:
            self.meter.relayed()
        if self._taken and self._taken[-1][0] == key:
            pieces = self._taken[-1][1]
            pieces.append(text)
            if len(pieces) > _MAX_PIECES:
                pieces[:] = ["".join(pieces)]
        else:
            self._taken.append((key, [text]))
        return True

    def standing(self) -> list[Any]:
        taken, self._taken = self._taken, []
        return [_standing(self._results[key], "".join(texts)) for key, texts in taken]

    def _learn(self) -> None:
        """What the delta decoded last came out as: a template for its key once two
        outputs in a row were one frame with their own text, alike but for it."""
        decoding, self._decoding = self._decoding, None
        frames, self.encoder.frames = self.encoder.frames, None
        if decoding is None or frames is None:
            return
        key, text, result = decoding
        if len(self._templates) >= _MAX_KEYS or len(self._shapes) >= _MAX_KEYS:
            self._forget()
        if len(frames) != 1 or _text_of(frames[0]) != text:
            self._templates[key] = None
            return
        shape = _with_text(frames[0], "")
        if self._shapes.get(key) == shape:
            self._templates[key] = frames[0]
            self._results[key] = result
            del self._shapes[key]
        else:
            self._shapes[key] = shape

    def _forget(self) -> None:
        """Start learning afresh (keys of relayed runs not yet absorbed are kept)."""
        pending = {key for key, _ in self._taken}
        self._templates = {k: v for k, v in self._templates.items() if k in pending}
        self._results = {k: v for k, v in self._results.items() if k in pending}
        self._shapes.clear()


def relay_for(agent: Agent, encoder: StreamEncoding, live: LiveTask) -> Relay | None:
    """A relay for the streamed run of ``live`` when it can have one: ``agent`` streams
    trpc's encoding on the 0.3 wire (:attr:`RemoteAgent.passes_through`) and the caller
    gets the same (the trpc encoder on the 0.3 wire, no overlay). None: the event path."""
    if not isinstance(agent, RemoteAgent) or not agent.passes_through:
        return None
    if type(encoder) is not StreamEncoder or encoder.v1:
        return None
    return Relay(agent, live, encoder, reasoning=redaction.current() is redaction.OFF)
