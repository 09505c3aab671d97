"""The relay of an A2A streamed run (:mod:`.relay`): the caller gets trpc's encoding on
the 0.3 wire, as the upstream writes it. A relayed delta is published to the run's live
task as the frame the trpc encoder made for the delta before it, with its own text: a
:class:`~trpc_bridge.codecs.a2a.text_delta.TextDelta` for a door that takes them, else
the protobuf update."""

from __future__ import annotations

import weakref

from a2a.types import TaskArtifactUpdateEvent

from trpc_bridge.agent import Agent
from trpc_bridge.client.remote_agent import RemoteAgent
from trpc_bridge.codecs.a2a.text_delta import TextDelta
from trpc_bridge.codecs.encoding import RunFrame, StreamEncoding, StreamFrame
from trpc_bridge.codecs.trpc.runs import StreamEncoder
from trpc_bridge.events import AgentEvent
from trpc_bridge.server.proxying.relay import Relay, reasoning_relayed, relays_from
from trpc_bridge.server.tasks.live_task import LiveTask


def _text_of(frame: RunFrame) -> str | None:
    """The text of a frame that is one text part, else None."""
    if isinstance(frame, TextDelta):
        return frame.text
    if isinstance(frame, TaskArtifactUpdateEvent) and len(frame.artifact.parts) == 1:
        part = frame.artifact.parts[0]
        return part.text if part.WhichOneof("content") == "text" else None
    return None


def _with_text(frame: RunFrame, text: str) -> RunFrame:
    """``frame`` (one text part, :func:`_text_of`) carrying ``text`` instead."""
    if isinstance(frame, TextDelta):
        return frame._replace(text=text)
    assert isinstance(frame, TaskArtifactUpdateEvent)
    update = TaskArtifactUpdateEvent()
    update.CopyFrom(frame)
    update.artifact.parts[0].text = text
    return update


class _Recording:
    """The run's encoder, giving its frames to the relay while it records them."""

    def __init__(self, encoder: StreamEncoder, relay: A2aRelay) -> None:
        self.inner = encoder
        # Weak: the relay holds this encoder, and a cycle between them would keep the
        # whole run (its live task, aggregate, frames) until the garbage collector ran.
        self._relay = weakref.ref(relay)
        self.done = encoder.done

    def start(self, *, app_name: str, user_id: str) -> list[StreamFrame]:
        return self.inner.start(app_name=app_name, user_id=user_id)

    def encode(self, event: AgentEvent) -> list[RunFrame]:
        frames = self.inner.encode(event)
        self.done = self.inner.done
        relay = self._relay()
        if relay is not None and relay.recorded is not None:
            relay.recorded.extend(frames)
        return frames

    def close(self) -> list[StreamFrame]:
        frames = self.inner.close()
        self.done = self.inner.done
        return frames


class A2aRelay(Relay[RunFrame, RunFrame]):
    """A relayed A2A run: :attr:`encoder` is what its live task drives."""

    def __init__(
        self, agent: RemoteAgent, live: LiveTask, encoder: StreamEncoder, *, reasoning: bool
    ) -> None:
        super().__init__(agent, reasoning=reasoning)
        self._live = live
        self.encoder = _Recording(encoder, self)

    def make(self, template: RunFrame, text: str) -> RunFrame:
        return _with_text(template, text)

    def template(self, outputs: list[RunFrame], text: str) -> RunFrame | None:
        if len(outputs) != 1 or _text_of(outputs[0]) != text:
            return None
        return _with_text(outputs[0], "")

    def later(self, template: RunFrame) -> RunFrame | None:
        # The encoder's rule: a delta's update appends once its artifact was written. So
        # every delta after this one has the run that appends (this one's, if it did).
        # An artifact without an id is never appended to: learnt from two outputs.
        if type(template) is TextDelta:
            run = template.run
            return template._replace(run=run.continuation) if run.artifact_id else None
        if not isinstance(template, TaskArtifactUpdateEvent):
            return None
        if not template.artifact.artifact_id:
            return None
        if template.append:
            return template
        appended = TaskArtifactUpdateEvent()
        appended.CopyFrom(template)
        appended.append = True
        return appended

    def take_bare(self, object_type: str) -> bool:
        frame = self.encoder.inner.bare(object_type)
        if frame is None:
            return False
        self._live.publish(frame)
        if self.meter is not None:
            self.meter.relayed(text=False)
        return True

    def emit(self, output: RunFrame) -> None:
        if type(output) is TextDelta:  # the live task's edge for text deltas
            self._live.publish_text(output)
        else:
            self._live.publish(output)  # type: ignore[arg-type]


def a2a_relay_for(agent: Agent, encoder: StreamEncoding, live: LiveTask) -> A2aRelay | None:
    """A relay for the streamed run of ``live`` when it can have one: ``agent`` streams
    trpc's encoding on the 0.3 wire (:attr:`RemoteAgent.passes_through`) and the caller
    gets the same (the trpc encoder on the 0.3 wire, no overlay). None: the event path."""
    remote = relays_from(agent)
    if remote is None or type(encoder) is not StreamEncoder or encoder.v1:
        return None
    return A2aRelay(remote, live, encoder, reasoning=reasoning_relayed())
