"""Relaying trpc's unary answer from an upstream that speaks the caller's wire.

A unary caller of ``trpc-bridge proxy`` in front of trpc-agent-go (``message/send`` on
the A2A 0.3 wire, trpc's encoding on both sides) is answered from the upstream's own
answer: the proxy sends it the call as ``message/send`` (:meth:`RemoteAgent.run
<trpc_bridge.client.RemoteAgent.run>` with ``stream=False``) and the answer, a completed
Task, is what trpc's packer gives back (``docs/specs/trpc-interaction.md`` §2.6): its
history then its artifact, each one event of the run. The event path decodes each into an event
(:func:`~trpc_bridge.codecs.dialects.decode.decode_any_result`) that the unary encoder
encodes again into the message it packs. For the answers made only of what that round
trip keeps as it is (:func:`relayed_messages`: agent messages of response metadata only,
then one artifact of one text part; ``object_type``, ``tag`` and ``llm_response_id``
strings, objects that are plain responses or preprocessing steps), the
:class:`UnaryRelay` hands the encoder those messages directly, without events. Anything
else the upstream answers is decoded as usual, from the same answer.

The answer the caller gets is then packed, stored and written as the event path's, its
ids and timestamps the proxy's own (``tests/server/test_unary_relay.py`` runs both paths
on the Go peer's answers and on generated ones). Tracing, metrics (each relayed message
counts as the event it stands for), the run timeout, cancellation and the task registry
stay the runner's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from a2a.types import Part

from trpc_bridge.agent import Agent
from trpc_bridge.client.remote_agent import RemoteAgent
from trpc_bridge.codecs.trpc.encode import EncodedMessage
from trpc_bridge.codecs.trpc.keys import META_OBJECT_TYPE, META_RESPONSE_ID, META_TAG
from trpc_bridge.codecs.trpc.runs import UnaryEncoder
from trpc_bridge.events import AgentEvent, AgentRequest, ObjectType
from trpc_bridge.server.proxying.ahead import AheadSource
from trpc_bridge.telemetry.run_meters import RunMeter

#: Response metadata a relayed message may carry (strings only).
_METADATA = frozenset({META_OBJECT_TYPE, META_RESPONSE_ID, META_TAG})
#: Objects whose events the unary encoder writes back as they came.
_OBJECTS = frozenset({"", ObjectType.COMPLETION, ObjectType.CHUNK})
_PREPROCESSING = "preprocessing."
_TASK = frozenset({"kind", "id", "contextId", "history", "artifacts", "status", "metadata"})
_HISTORY_MESSAGE = frozenset(
    {"kind", "messageId", "role", "parts", "metadata", "contextId", "taskId"}
)
_ARTIFACT = frozenset({"artifactId", "parts", "metadata"})
_STATUS = frozenset({"state", "timestamp"})
_TEXT_PART = frozenset({"kind", "text"})
#: A message or artifact without metadata (never changed: read only).
_NO_METADATA: dict[str, Any] = {}


def _metadata(metadata: Any, fallback_id: str) -> dict[str, Any] | None:
    """The response metadata the unary encoder writes for a message of ``metadata``
    (the event's id: its ``llm_response_id``, else ``fallback_id``); None when it is not
    one relayed."""
    if type(metadata) is not dict or not _METADATA.issuperset(metadata):
        return None
    # Its keys are at most these three: their values are all it holds.
    get = metadata.get
    object_type, tag, response_id = (
        get(META_OBJECT_TYPE, ""),
        get(META_TAG, ""),
        get(META_RESPONSE_ID, ""),
    )
    if type(object_type) is not str or type(tag) is not str or type(response_id) is not str:
        return None
    if object_type not in _OBJECTS and not object_type.startswith(_PREPROCESSING):
        return None
    out = {META_OBJECT_TYPE: object_type or ObjectType.COMPLETION}
    if tag:
        out[META_TAG] = tag
    response_id = response_id or fallback_id
    if response_id:
        out[META_RESPONSE_ID] = response_id
    return out


def _history_message(message: Any) -> EncodedMessage | None:
    """An agent message of response metadata only (no parts)."""
    if type(message) is not dict or not _HISTORY_MESSAGE.issuperset(message):
        return None
    get = message.get
    message_id = get("messageId")
    if (
        get("role") != "agent"
        or type(message_id) is not str
        or get("parts") not in (None, [])
        or get("kind", "message") != "message"
        or type(get("contextId", "")) is not str
        or type(get("taskId", "")) is not str
    ):
        return None
    metadata = _metadata(get("metadata", _NO_METADATA), message_id)
    if metadata is None:
        return None
    return EncodedMessage([], metadata, metadata.get(META_RESPONSE_ID, ""))


def _artifact(artifact: Any) -> EncodedMessage | None:
    """An artifact of one text part (not empty, no part metadata)."""
    if type(artifact) is not dict or not _ARTIFACT.issuperset(artifact):
        return None
    artifact_id = artifact.get("artifactId")
    parts = artifact.get("parts")
    if type(artifact_id) is not str or type(parts) is not list or len(parts) != 1:
        return None
    part = parts[0]
    if type(part) is not dict or not _TEXT_PART.issuperset(part) or part.get("kind") != "text":
        return None
    text = part.get("text")
    if type(text) is not str or not text:
        return None
    metadata = _metadata(artifact.get("metadata", _NO_METADATA), artifact_id)
    if metadata is None:
        return None
    return EncodedMessage([Part(text=text)], metadata, metadata.get(META_RESPONSE_ID, ""))


def relayed_messages(result: Any) -> list[EncodedMessage] | None:
    """The messages the unary encoder makes of the events of ``result`` (an upstream's
    0.3 ``message/send`` result, parsed JSON), when it is a completed Task of agent
    messages of response metadata and one text artifact (see the module doc); None for
    any other answer."""
    if type(result) is not dict or result.get("kind") != "task" or not _TASK.issuperset(result):
        return None
    status = result.get("status")
    if type(status) is not dict or not _STATUS.issuperset(status):
        return None
    if status.get("state") != "completed" or result.get("metadata", {}) != {}:
        return None
    if type(result.get("id")) is not str or type(result.get("contextId")) is not str:
        return None
    history = result.get("history", [])
    artifacts = result.get("artifacts")
    if type(history) is not list or type(artifacts) is not list or len(artifacts) != 1:
        return None
    messages = []
    for message in history:
        encoded = _history_message(message)
        if encoded is None:
            return None
        messages.append(encoded)
    last = _artifact(artifacts[0])
    if last is None:
        return None
    messages.append(last)
    return messages


class UnaryRelay(AheadSource):
    """A relayed unary run: the :class:`~trpc_bridge.server.proxying.relay.RunSource`
    whose agent is asked with ``message/send``, and the
    :class:`~trpc_bridge.client.passthrough.AnswerPassthrough` its answer is offered to."""

    streams = False

    def __init__(self, agent: RemoteAgent, encoder: UnaryEncoder) -> None:
        self._agent = agent
        self._encoder = encoder
        #: The run's metrics (set by the runner): each relayed message is noted there.
        self.meter: RunMeter | None = None

    def events(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        """The agent's events for ``request``: none when its answer was relayed."""
        return self._agent.run(request, stream=False, answer=self, started=self.sent_at)

    def take_answer(self, result: Any) -> bool:
        messages = relayed_messages(result)
        if messages is None:
            return False
        self._encoder.add_encoded(messages)
        if self.meter is not None:
            for _ in messages:
                self.meter.relayed()
        return True


def unary_relay_for(agent: Agent, encoder: object) -> UnaryRelay | None:
    """A relay for a unary run encoded by ``encoder`` when it can have one: ``agent``
    answers trpc's encoding on the 0.3 wire (:attr:`RemoteAgent.answers_through`) and the
    caller gets the same (trpc's unary encoder on the 0.3 wire). None: the event path."""
    if not isinstance(agent, RemoteAgent) or not agent.answers_through:
        return None
    if type(encoder) is not UnaryEncoder or encoder.v1:
        return None
    return UnaryRelay(agent, encoder)
