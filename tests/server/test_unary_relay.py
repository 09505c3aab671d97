"""The proxy's unary relay (``server/proxying/unary_relay.py``) is the event path, byte
for byte, for the same upstream answer.

The reference is what the proxy does without the relay when it asks its upstream with
``message/send``: the answer decoded into events (``decode_any_result``, as
:class:`RemoteAgent` reads a unary answer), passed through the runner's redaction and
encoded by the unary encoder. (Asked with ``message/stream`` the same agent is decoded
from other frames, into other events: that is not the reference.)

- The messages the relay hands the encoder are the ones the encoder keeps of those
  events, for generated answers of every shape (the relay declines what it cannot take:
  then the event path runs, on the same answer).
- Two proxies in front of one upstream that replays a trpc-agent-go answer — one as
  ``trpc-bridge proxy`` runs it (the relay takes the answer), one whose agent is the same
  RemoteAgent asked without the relay — answer a trpc caller's ``message/send`` with the
  same bytes once the values each proxy mints (its ids, its timestamps) are named by
  order of appearance, and so does ``tasks/get`` afterwards: for the live Go peer's
  answer of every interop scenario and for generated ones.
"""

from __future__ import annotations

import collections
import contextlib
import json
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from peers import build_gopeer, go_available, go_server
from replay_server import ReplayPeer, serving

from trpc_bridge import redaction
from trpc_bridge.client import RemoteAgent
from trpc_bridge.codecs.dialects.decode import decode_any_result
from trpc_bridge.codecs.encoding import EncodeOptions, RunTarget
from trpc_bridge.codecs.trpc.encode import EncodedMessage
from trpc_bridge.codecs.trpc.keys import INTERACTION_SPEC_VERSION
from trpc_bridge.codecs.trpc.runs import UnaryEncoder
from trpc_bridge.redaction import EventRedactor
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.proxying.unary_relay import UnaryRelay, relayed_messages

from .test_relay_equivalence import EventPath
from .test_relay_equivalence import normalised as minted_named

SCENARIOS = ["text", "reasoning", "tool", "parallel_tools", "code", "error", "unicode", "long"]


def event_path(result: Any) -> list[EncodedMessage]:
    """The messages the unary encoder keeps of ``result``'s events (the runner's loop)."""
    encoder = UnaryEncoder(RunTarget("task-1", "ctx-1", EncodeOptions()))
    redactor = EventRedactor(redaction.current())
    for event in decode_any_result(result, invocation_id="inv-1", author="weather-agent"):
        for shown in redactor.events(event):
            if not encoder.add(shown):
                return encoder.messages
    for shown in redactor.close():
        if not encoder.add(shown):
            break
    return encoder.messages


def _same_messages(ours: Sequence[EncodedMessage], theirs: Sequence[EncodedMessage]) -> None:
    assert len(ours) == len(theirs)
    for mine, reference in zip(ours, theirs, strict=True):
        assert list(mine.parts) == list(reference.parts)
        assert mine.metadata == reference.metadata
        assert (mine.response_id, mine.partial) == (reference.response_id, reference.partial)


# --- generated answers -------------------------------------------------------------------

_IDS = st.sampled_from(["", "chatcmpl-1", "msg-1", "x"])
#: Objects of the messages the relay takes, and of others.
_PLAIN_OBJECTS = ["preprocessing.basic", "preprocessing.content", "chat.completion.chunk"]
_PLAIN_OBJECTS += ["chat.completion", ""]
_OTHER_OBJECTS = ["tool.response", "postprocessing.code_execution", "runner.completion"]
_OTHER_OBJECTS += ["graph.node.start", "error", "a2a.task_status", "preprocessing"]
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=5)


@st.composite
def _metadata(draw: st.DrawFn) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if draw(st.integers(0, 5)):
        metadata["object_type"] = draw(st.sampled_from(_PLAIN_OBJECTS))
    if draw(st.booleans()):
        metadata["llm_response_id"] = draw(_IDS)
    if draw(st.integers(0, 3)) == 0:
        metadata["tag"] = draw(st.sampled_from(["", "t1", "code_execution_code"]))
    return metadata


@st.composite
def _message(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {
        "kind": "message",
        "messageId": draw(st.sampled_from(["msg-1", "msg-2", "msg-3", ""])),
        "role": "agent",
        "parts": draw(st.sampled_from([None, []])),
    }
    if draw(st.integers(0, 5)):
        message["metadata"] = draw(_metadata())
    if draw(st.integers(0, 5)) == 0:
        message[draw(st.sampled_from(["contextId", "taskId"]))] = "ctx-up"
    return message


@st.composite
def _artifact(draw: st.DrawFn) -> dict[str, Any]:
    artifact: dict[str, Any] = {
        "artifactId": draw(st.sampled_from(["msg-a", "chatcmpl-1", ""])),
        "parts": [{"kind": "text", "text": draw(_TEXT.filter(bool))}],
    }
    if draw(st.integers(0, 5)):
        artifact["metadata"] = draw(_metadata())
    return artifact


_SPOILS = [
    "user message",
    "message text",
    "message data",
    "metadata key",
    "metadata value",
    "object",
    "message member",
    "artifact parts",
    "artifact member",
    "artifacts",
    "status",
    "status message",
    "task metadata",
]


def _spoil(draw: st.DrawFn, task: dict[str, Any]) -> None:
    """Change one thing the relay does not take (the event path may read it otherwise)."""
    how = draw(st.sampled_from(_SPOILS))
    history, artifact = task["history"], task["artifacts"][0]
    message = draw(st.sampled_from(history)) if history else None
    target = message if message is not None and draw(st.booleans()) else artifact
    if how == "user message" and message is not None:
        message["role"] = "user"
    elif how == "message text" and message is not None:
        message["parts"] = [{"kind": "text", "text": draw(_TEXT)}]
    elif how == "message data" and message is not None:
        call = {"args": "{}", "id": "call_1", "name": "get", "type": "function"}
        message["parts"] = [{"kind": "data", "data": call, "metadata": {"type": "function_call"}}]
    elif how == "metadata key":
        key = draw(st.sampled_from(["error_message", "state_delta", "usage", "task_state", "x"]))
        target.setdefault("metadata", {})[key] = draw(st.sampled_from(["boom", {"k": "MQ=="}]))
    elif how == "metadata value":
        target["metadata"] = {"object_type": "chat.completion", "llm_response_id": 7}
    elif how == "object":
        target["metadata"] = {"object_type": draw(st.sampled_from(_OTHER_OBJECTS))}
    elif how == "message member" and message is not None:
        message[draw(st.sampled_from(["extensions", "referenceTaskIds"]))] = ["x"]
    elif how == "artifact parts":
        artifact["parts"] = draw(
            st.sampled_from(
                [
                    [],
                    None,
                    [{"kind": "text", "text": ""}],
                    [{"kind": "text", "text": "a"}, {"kind": "text", "text": "b"}],
                    [{"kind": "text", "text": "a", "metadata": {"thought": True}}],
                    [{"kind": "data", "data": {"a": 1}}],
                ]
            )
        )
    elif how == "artifact member":
        artifact[draw(st.sampled_from(["name", "description", "append"]))] = "x"
    elif how == "artifacts":
        task["artifacts"] = draw(st.sampled_from([[], [artifact, dict(artifact)]]))
    elif how == "status":
        task["status"]["state"] = draw(st.sampled_from(["failed", "working", "canceled"]))
    elif how == "status message":
        task["status"]["message"] = draw(_message())
    elif how == "task metadata":
        task["metadata"] = draw(st.sampled_from([{"object_type": "error"}, {"x": "y"}]))


@st.composite
def answers(draw: st.DrawFn) -> dict[str, Any]:
    """trpc-agent-go's unary answer (a Task of history and one artifact), half of them
    with one thing it does not send or the relay does not take."""
    task: dict[str, Any] = {
        "artifacts": [draw(_artifact())],
        "contextId": "ctx-up",
        "history": draw(st.lists(_message(), max_size=6)),
        "id": "task-up",
        "kind": "task",
        "status": {"state": "completed", "timestamp": "2026-01-01T00:00:00Z"},
    }
    if draw(st.booleans()):
        _spoil(draw, task)
    return task


@settings(max_examples=800, deadline=None)
@given(answers())
def test_relayed_messages_are_the_event_paths(answer: dict[str, Any]) -> None:
    relayed = relayed_messages(json.loads(json.dumps(answer)))
    if relayed is not None:  # declined: the event path runs on the same answer
        _same_messages(relayed, event_path(json.loads(json.dumps(answer))))


def test_a_go_answer_is_relayed() -> None:
    metadata = {"llm_response_id": "chatcmpl-text-1", "object_type": "chat.completion"}
    answer = {
        "artifacts": [
            {"artifactId": "msg-a", "parts": [{"kind": "text", "text": "Hi"}], "metadata": metadata}
        ],
        "contextId": "ctx-up",
        "history": [
            {
                "kind": "message",
                "messageId": "msg-1",
                "metadata": {"object_type": "preprocessing.basic"},
                "parts": None,
                "role": "agent",
            }
        ],
        "id": "task-up",
        "kind": "task",
        "status": {"state": "completed", "timestamp": "2026-01-01T00:00:00Z"},
    }
    relayed = relayed_messages(answer)
    assert relayed is not None
    _same_messages(relayed, event_path(answer))
    # The decoder names a message without a response id by its own id.
    assert relayed[0].metadata["llm_response_id"] == "msg-1"


# --- two proxies of one upstream ------------------------------------------------------------


@pytest.fixture
def taken() -> Iterator[collections.Counter[str]]:
    """How many answers the unary relays took (the fast path ran)."""
    counts: collections.Counter[str] = collections.Counter()
    original = UnaryRelay.take_answer

    def take_answer(self: UnaryRelay, result: Any) -> bool:
        took = original(self, result)
        counts["taken" if took else "declined"] += 1
        return took

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(UnaryRelay, "take_answer", take_answer)
        yield counts


@contextlib.asynccontextmanager
async def proxies(peer: ReplayPeer) -> AsyncIterator[tuple[str, str]]:
    """The relay's proxy and the event path's, in front of ``peer``: their JSON-RPC URLs."""
    async with contextlib.AsyncExitStack() as stack:
        upstream = await stack.enter_async_context(serving(peer))
        remote = await stack.enter_async_context(await RemoteAgent.connect(upstream))
        options = ServerOptions(grpc_port=None)
        relay = await stack.enter_async_context(BridgeServer(remote, options))
        event = await stack.enter_async_context(
            BridgeServer(EventPath(remote, stream=False), options)
        )
        yield relay.jsonrpc_url, event.jsonrpc_url


async def _rpc(http: httpx.AsyncClient, url: str, method: str, params: dict[str, Any]) -> bytes:
    body = {"jsonrpc": "2.0", "id": "c1", "method": method, "params": params}
    return (await http.post(url, json=body)).content


_SEND = {
    "message": {
        "kind": "message",
        "messageId": "m1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hi"}],
        "metadata": {"interaction_spec_version": INTERACTION_SPEC_VERSION},
    }
}


#: A unary task's id: ``task-<the caller's messageId>-<unix nanos>`` (trpc's), minted.
_UNARY_TASK_ID = re.compile(rb"task-m1-[0-9]+")


def normalised(answer: bytes, upstream: bytes) -> bytes:
    """``answer`` with the ids and timestamps its proxy minted named (as for streams), and
    its unary task id too."""
    return minted_named(_UNARY_TASK_ID.sub(b"task-m1-<n>", answer), upstream)


async def assert_same(peer: ReplayPeer, answer: Any) -> None:
    """``message/send`` and ``tasks/get`` after it answer alike on both proxies."""
    peer.send_result = answer
    upstream = json.dumps(answer).encode()
    async with proxies(peer) as (relay_url, event_url), httpx.AsyncClient(timeout=60) as http:
        answers = [await _rpc(http, url, "message/send", _SEND) for url in (relay_url, event_url)]
        assert normalised(answers[0], upstream) == normalised(answers[1], upstream)
        tasks = []
        for url, sent in zip((relay_url, event_url), answers, strict=True):
            result = json.loads(sent)["result"]
            task_id = result["id"] if result["kind"] == "task" else result.get("taskId", "")
            tasks.append(await _rpc(http, url, "tasks/get", {"id": task_id}))
        assert normalised(b"".join(answers[:1] + tasks[:1]), upstream) == normalised(
            b"".join(answers[1:] + tasks[1:]), upstream
        )


@pytest.fixture(scope="module")
def go_answers() -> dict[str, Any]:
    """The live Go peer's ``message/send`` result for every scenario (replayed: its ids
    differ per call)."""
    if not go_available():
        pytest.skip("Go toolchain not on PATH")
    build_gopeer()
    found = {}
    for scenario in SCENARIOS:
        with go_server(scenario, extra=["--blocking-send"]) as go:
            body = {"jsonrpc": "2.0", "id": "g1", "method": "message/send", "params": _SEND}
            found[scenario] = httpx.post(go.url, json=body, timeout=60).json()["result"]
    return found


@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_go_answers(
    go_answers: dict[str, Any], taken: collections.Counter[str], scenario: str
) -> None:
    await assert_same(ReplayPeer(), go_answers[scenario])
    if scenario in ("text", "unicode", "long"):  # what the relay is for: taken whole
        assert taken["taken"] == 1, taken
    assert taken["taken"] + taken["declined"] == 1


@settings(max_examples=25, deadline=None, derandomize=True)
@given(answers())
def test_generated_answers(answer: dict[str, Any]) -> None:
    import asyncio

    asyncio.run(assert_same(ReplayPeer(), answer))
