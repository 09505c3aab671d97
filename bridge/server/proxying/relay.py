"""Relaying trpc's streamed text deltas from an upstream that writes them as the door
would.

When the agent is a :class:`~trpc_bridge.client.RemoteAgent` streaming trpc's encoding on
the A2A 0.3 wire (``trpc-bridge proxy`` in front of trpc-agent-go), nearly every upstream
frame is a text delta that a door writes again with only its ids and layout changed: the
proxy's task, context and response ids, ``append``, the metadata on the artifact for an
A2A caller (:mod:`.a2a_relay`); a ``TEXT_MESSAGE_CONTENT`` for an AG-UI one
(:mod:`.agui_relay`). Decoding each into an event and encoding it back is most of a
proxied frame's cost. A :class:`Relay` skips that for those frames, and only them:

- every result the run's decoder does not get from it is decoded and written as usual;
- a text delta (:func:`hot_delta`: an ``artifact-update`` of one text part with
  ``object_type`` ``chat.completion.chunk`` and no other metadata than its response id
  and tag; reasoning only when no redaction policy is installed, since the runner masks
  thinking text by its content) is keyed by everything in it but its text. A key's
  frames go the usual way until two in a row came out as one output each, carrying their
  text and alike but for it, or one did from which the door knows what every later delta
  of its key comes out as (:meth:`Relay.later`: for an A2A caller, the update appending
  to the artifact the first delta wrote); from then on a frame of that key
  is that output with its own text, handed to the door at once, without being decoded or
  encoded;
- before the decoder reads anything else it absorbs results standing for the relayed
  ones (one per run of consecutive relayed frames of a key, their texts joined): the
  text it collects per response id, the task it follows and the state it keeps are then
  what they would have been (:mod:`~trpc_bridge.client.passthrough`). What the door's
  writer keeps needs nothing: a relayed key's output is one it has just written (an
  AG-UI writer, whose output depends on the message open before, relays a key only
  right after a frame of the same key);
- a *bare update* (trpc's ``preprocessing.*`` frames, half of a tool call's stream) that
  the decoder names as one that would only be its one event
  (:meth:`~trpc_bridge.codecs.trpc.decode.StreamDecoder.bare_type`) is written as the
  encoder would write that event (:meth:`~trpc_bridge.codecs.trpc.runs.StreamEncoder.bare`)
  by a door that can (:meth:`Relay.take_bare`; the A2A door), and the decoder absorbs it.

The output is the event path's, byte for byte (``tests/server/test_relay_equivalence.py``
runs both on the Go peer's streams and on generated ones). Runs to other agents, on
other wires, or with tfrs progress take the event path.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Generic, Protocol, TypeVar

import orjson

from trpc_bridge import redaction
from trpc_bridge.agent import Agent
from trpc_bridge.client.remote_agent import RemoteAgent
from trpc_bridge.codecs.trpc.keys import META_OBJECT_TYPE, META_RESPONSE_ID, META_TAG
from trpc_bridge.events import AgentEvent, AgentRequest, ObjectType
from trpc_bridge.server.proxying.ahead import AheadSource
from trpc_bridge.telemetry.run_meters import RunMeter

#: An output of the door (a frame, SSE text) and what a key's outputs are made from
#: (compared for equality).
Out = TypeVar("Out")
Template = TypeVar("Template")

#: Keys a relay remembers at once (a stream has a handful: answer and reasoning text per
#: response); past it they are forgotten and learnt again.
_MAX_KEYS = 64
#: Relayed texts kept per run of a key before they are joined (memory stays linear in
#: the text, not in the number of frames).
_MAX_PIECES = 256
#: The response metadata a relayed delta may carry (an error, a state delta: decoded).
_DELTA_KEYS = frozenset({META_OBJECT_TYPE, META_RESPONSE_ID, META_TAG})


class RunSource(Protocol):
    """How the runner gets a run's events instead of ``agent.run`` (a relay); it notes
    what it hands over without an event in the run's metrics. The runner may send the
    run's request before the run starts (:mod:`.ahead`): the run's meter starts then
    (``sent_at``)."""

    meter: RunMeter | None
    sent_at: float | None

    def events(self, request: AgentRequest) -> AsyncIterator[AgentEvent]: ...

    def send_ahead(self, request: AgentRequest) -> bool: ...

    def drop_ahead(self) -> None: ...


def _plain_metadata(metadata: Any) -> bool:
    return type(metadata) is dict and _DELTA_KEYS.issuperset(metadata)


def hot_delta(result: Any, *, marked_parts: bool) -> tuple[bytes, str] | None:
    """``(key, text)`` of trpc's streamed text delta in A2A 0.3 JSON: the key is the
    result's JSON without the text. None for anything else. ``marked_parts``: a part
    with metadata (reasoning) may be relayed; without, only answer text is."""
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


def _standing(result: dict[str, Any], text: str) -> dict[str, Any]:
    """``result`` (a :func:`hot_delta`) carrying ``text`` instead; ``result`` unchanged."""
    artifact = result["artifact"]
    part = {**artifact["parts"][0], "text": text}
    return {**result, "artifact": {**artifact, "parts": [part]}}


class Relay(AheadSource, Generic[Out, Template]):
    """One streamed run relayed (see the module doc): the
    :class:`~trpc_bridge.client.passthrough.Passthrough` its agent's stream is given
    (:meth:`events`). A door's relay says what its outputs are: how one is made from a
    template and a text (:meth:`make`), what template an output of a text stands for
    (:meth:`template`), and where it goes (:meth:`emit`); it records what the door
    writes for a result being decoded in :attr:`recorded`."""

    #: Relay a key only right after a frame of the same key (the door's output depends
    #: on the frame before).
    consecutive = False

    def __init__(self, agent: RemoteAgent, *, reasoning: bool) -> None:
        self._agent = agent
        #: Reasoning deltas may be relayed (no redaction policy masks them).
        self._reasoning = reasoning
        #: What the door wrote for the result being decoded (None: not recording).
        self.recorded: list[Out] | None = None
        #: key → the template its deltas are made from.
        self._templates: dict[bytes, Template] = {}
        #: key → the template of its last output, until two in a row agree.
        self._last: dict[bytes, Template] = {}
        #: key → a result of that key (for the standing results).
        self._results: dict[bytes, dict[str, Any]] = {}
        #: The delta being decoded now, whose output is being recorded.
        self._decoding: tuple[bytes, str, dict[str, Any]] | None = None
        #: The key of the result before (None: not a delta).
        self._previous: bytes | None = None
        #: Runs of consecutive relayed deltas: (key, their texts).
        self._taken: list[tuple[bytes, list[str]]] = []
        #: The run's metrics (set by the runner): each relayed delta is noted there.
        self.meter: RunMeter | None = None

    # --- what a door's relay says ---------------------------------------------------

    def make(self, template: Template, text: str) -> Out:
        raise NotImplementedError

    def template(self, outputs: list[Out], text: str) -> Template | None:
        """The template of ``outputs`` (those of a delta of ``text``) when they are one
        output carrying exactly that text; None otherwise."""
        raise NotImplementedError

    def emit(self, output: Out) -> None:
        raise NotImplementedError

    def later(self, template: Template) -> Template | None:
        """The template every later delta of a key comes out as, known from one output
        with ``template`` (a door whose output for a key changes only after the key's
        first delta says how, and its key is relayed from the second delta on). Default:
        None, learnt from two outputs alike."""
        return None

    async def pace(self) -> None:
        """Returns when the door can take more output."""

    # --- the passthrough --------------------------------------------------------------

    def events(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        """The agent's events for ``request``: those of the results not relayed."""
        return self._agent.run(request, passthrough=self, started=self.sent_at)

    def take(self, result: Any) -> bool:
        if self._decoding is not None:
            self._learn()
        hot = hot_delta(result, marked_parts=self._reasoning)
        if hot is None:
            self._previous = None
            return False
        key, text = hot
        previous, self._previous = self._previous, key
        template = self._templates.get(key)
        if template is None or (self.consecutive and previous != key):
            self._decoding = (key, text, result)
            self.recorded = []
            return False
        self.emit(self.make(template, text))
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

    def take_bare(self, object_type: str) -> bool:
        """A door that writes bare updates without their event says so (see the module
        doc); by default it does not."""
        return False

    def standing(self) -> list[Any]:
        if not self._taken:  # asked before every result decoded: mostly nothing taken
            return []
        taken, self._taken = self._taken, []
        return [_standing(self._results[key], "".join(texts)) for key, texts in taken]

    def _learn(self) -> None:
        """What the delta decoded last came out as: its key's template once two outputs
        in a row were one output with their own text, alike but for it."""
        decoding, self._decoding = self._decoding, None
        outputs, self.recorded = self.recorded, None
        if decoding is None or outputs is None:
            return
        key, text, result = decoding
        template = self.template(outputs, text)
        if template is None:  # not one output of its text: the key is not relayed now
            self._last.pop(key, None)
            self._templates.pop(key, None)  # (a door's state changed what it writes)
            return
        known = self._templates.get(key)
        if known is not None:
            if known != template:  # the key came out otherwise: learnt again
                del self._templates[key]
                self._last[key] = template
            return
        learnt = template if self._last.get(key) == template else self.later(template)
        if learnt is not None:
            if len(self._templates) >= _MAX_KEYS:
                self._forget()
            self._templates[key] = learnt
            self._results[key] = result
            self._last.pop(key, None)
            return
        if len(self._last) >= _MAX_KEYS:
            self._last.clear()
        self._last[key] = template

    def _forget(self) -> None:
        """Start learning afresh (keys of relayed runs not yet absorbed are kept)."""
        pending = {key for key, _ in self._taken}
        self._templates = {k: v for k, v in self._templates.items() if k in pending}
        self._results = {k: v for k, v in self._results.items() if k in pending}


def relays_from(agent: Agent) -> RemoteAgent | None:
    """``agent`` when its streams can be relayed (:attr:`RemoteAgent.passes_through`)."""
    return agent if isinstance(agent, RemoteAgent) and agent.passes_through else None


def reasoning_relayed() -> bool:
    """No redaction policy masks thinking text: reasoning deltas may be relayed."""
    return redaction.current() is redaction.OFF
