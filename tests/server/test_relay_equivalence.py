"""The proxy's relay (``server/proxying``) is the event path, byte for byte.

Two proxies in front of one upstream: ``BridgeServer(RemoteAgent)`` as ``trpc-bridge
proxy`` runs it (same wire and encoding on both sides: the relay takes the text deltas),
and the same RemoteAgent behind a wrapper the relay does not apply to (every frame
decoded to events and encoded again). The upstream replays the Go peer's recorded
streams (``interop/go/testdata/sse_v0``), the live Go peer's, and generated ones; a
trpc caller reads both proxies over A2A 0.3 JSON-RPC. Their answers must be the same
bytes once the values each proxy mints itself (its task, context and message ids, its
timestamps) are named by order of appearance, and so must ``tasks/get`` afterwards.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import json
import re
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from agui_checks import run_input
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peers import build_gopeer, go_available, go_server
from replay_server import ReplayPeer, go_sse_frame, serving

from trpc_bridge import redaction
from trpc_bridge.agent import Skill
from trpc_bridge.client import RemoteAgent
from trpc_bridge.codecs.a2a.text_delta import TextRun
from trpc_bridge.codecs.trpc.keys import INTERACTION_SPEC_VERSION
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.options import EncodingOptions
from trpc_bridge.server.proxying.a2a_relay import A2aRelay
from trpc_bridge.server.proxying.relay import Relay
from trpc_bridge.server.tasks.live_task import LiveTask

ROOT = Path(__file__).resolve().parents[2]
GO_STREAMS = sorted((ROOT / "interop" / "go" / "testdata" / "sse_v0").glob("*.sse"))
T = TypeVar("T")


class EventPath:
    """The same remote agent, but not a RemoteAgent, so nothing is relayed: the runner
    decodes every frame (``stream=False``: the remote is asked with ``message/send`` and
    its answer decoded into events)."""

    tools_run_elsewhere = True
    meters_own_tokens = True

    def __init__(self, remote: RemoteAgent, *, stream: bool = True) -> None:
        self.remote = remote
        self.stream = stream
        self.name = remote.name
        self.description = remote.description

    @property
    def skills(self) -> Sequence[Skill]:
        return self.remote.skills

    def run(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        return self.remote.run(request, stream=self.stream)


@dataclass
class Proxies:
    """Both proxies of one upstream, served by an event loop in a thread of its own."""

    relay_url: str = ""
    event_url: str = ""
    relay_agui: str = ""
    event_agui: str = ""
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(120)

    async def start(self, upstream: str) -> None:
        remote = await self.stack.enter_async_context(await RemoteAgent.connect(upstream))
        # No coalescing for a lagging reader: what it merges depends on timing.
        options = ServerOptions(grpc_port=None, encoding=EncodingOptions(coalesce_after=10**9))
        relay = await self.stack.enter_async_context(BridgeServer(remote, options))
        event = await self.stack.enter_async_context(BridgeServer(EventPath(remote), options))
        self.relay_url, self.event_url = relay.jsonrpc_url, event.jsonrpc_url
        self.relay_agui, self.event_agui = relay.agui_url, event.agui_url

    def both(self, method: str, params: dict[str, Any]) -> tuple[bytes, bytes]:
        return _rpc(self.relay_url, method, params), _rpc(self.event_url, method, params)

    def both_agui(self) -> tuple[bytes, bytes]:
        return _agui(self.relay_agui), _agui(self.event_agui)


@contextlib.contextmanager
def proxies_of(upstream: Coroutine[Any, Any, str] | str) -> Iterator[Proxies]:
    proxies = Proxies()
    thread = threading.Thread(target=proxies.loop.run_forever, daemon=True)
    thread.start()
    try:

        async def start() -> None:
            url = upstream if isinstance(upstream, str) else await upstream
            await proxies.start(url)

        proxies.run(start())
        yield proxies
    finally:
        proxies.run(proxies.stack.aclose())
        proxies.run(_settled())
        proxies.loop.call_soon_threadsafe(proxies.loop.stop)
        thread.join(10)


async def _settled() -> None:
    """Every task still pending on the loop (the SSE responses' watchers) is done."""
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


def _rpc(url: str, method: str, params: dict[str, Any]) -> bytes:
    body = {"jsonrpc": "2.0", "id": "c1", "method": method, "params": params}
    headers = {"Accept": "text/event-stream, application/json"}
    return httpx.post(url, json=body, headers=headers, timeout=60).content


def _agui(url: str) -> bytes:
    run = run_input(thread="thread-1", run="run-1", message="u1")
    return httpx.post(url, json=run, headers={"Accept": "text/event-stream"}, timeout=60).content


def _message(text: str = "hi") -> dict[str, Any]:
    return {
        "message": {
            "kind": "message",
            "messageId": "m1",
            "role": "user",
            "parts": [{"kind": "text", "text": text}],
            # trpc-agent-go's own client: the trpc encoding, as upstream
            "metadata": {"interaction_spec_version": INTERACTION_SPEC_VERSION},
        }
    }


@pytest.fixture(scope="module")
def relayed() -> Iterator[collections.Counter[str]]:
    """Counts the frames the relays of this module took, by door (the fast path ran)."""
    taken: collections.Counter[str] = collections.Counter()
    original = Relay.take
    original_bare = A2aRelay.take_bare

    def take(self: Relay[Any, Any], result: Any) -> bool:
        took = original(self, result)
        taken[type(self).__name__] += took
        return took

    def take_bare(self: A2aRelay, object_type: str) -> bool:
        took = original_bare(self, object_type)
        taken["bare"] += took
        return took

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Relay, "take", take)
        patch.setattr(A2aRelay, "take_bare", take_bare)
        yield taken


@pytest.fixture(scope="module")
def replay(relayed: collections.Counter[str]) -> Iterator[tuple[ReplayPeer, Proxies]]:
    peer = ReplayPeer()
    stack = contextlib.AsyncExitStack()

    async def upstream() -> str:
        return await stack.enter_async_context(serving(peer))

    with proxies_of(upstream()) as proxies:
        yield peer, proxies
        proxies.run(stack.aclose())


# --- comparing --------------------------------------------------------------------------

_MINTED = re.compile(rb"[a-z]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIMESTAMP = re.compile(rb'"timestamp":"[^"]*"')


def normalised(answer: bytes, upstream: bytes) -> bytes:
    """``answer`` with each id its proxy minted (one the upstream never sent) named by
    order of first appearance, and its timestamps left out."""
    names: dict[bytes, bytes] = {}

    def name(match: re.Match[bytes]) -> bytes:
        token = match.group(0)
        if token in upstream:
            return token
        return names.setdefault(token, b"<id%d>" % len(names))

    return _TIMESTAMP.sub(b'"timestamp":"-"', _MINTED.sub(name, answer))


def _task_id(answer: bytes) -> str:
    for line in answer.splitlines():
        if line.startswith(b"data:"):
            return str(json.loads(line[5:])["result"]["taskId"])
    raise AssertionError(f"no frame in {answer[:300]!r}")


def assert_same(proxies: Proxies, upstream: bytes) -> None:
    """A streamed call and ``tasks/get`` after it give the same answers on both; so does
    an AG-UI run."""
    relay, event = proxies.both("message/stream", _message())
    assert normalised(relay, upstream) == normalised(event, upstream)
    tasks = [
        _rpc(url, "tasks/get", {"id": _task_id(answer)})
        for url, answer in ((proxies.relay_url, relay), (proxies.event_url, event))
    ]
    assert normalised(relay + tasks[0], upstream) == normalised(event + tasks[1], upstream)
    relay, event = proxies.both_agui()
    assert normalised(relay, upstream) == normalised(event, upstream)


# --- the Go peer's streams -----------------------------------------------------------------


@pytest.mark.parametrize("recorded", GO_STREAMS, ids=[p.stem for p in GO_STREAMS])
def test_go_recorded_streams(
    replay: tuple[ReplayPeer, Proxies], relayed: collections.Counter[str], recorded: Path
) -> None:
    peer, proxies = replay
    body = recorded.read_bytes()
    peer.stream_chunks = [body]
    before = relayed.copy()
    assert_same(proxies, body)
    if recorded.stem == "long":  # 1,000 deltas of one response: nearly all relayed
        assert relayed["A2aRelay"] - before["A2aRelay"] > 900
        assert relayed["AguiRelay"] - before["AguiRelay"] > 900


@pytest.mark.parametrize("scenario", ["long", "reasoning", "tool", "error", "parallel_tools"])
def test_live_go_peer(relayed: collections.Counter[str], scenario: str) -> None:
    """The Go server itself upstream; its ids are its own and differ per call, so both
    proxies read one recorded answer of it, replayed."""
    if not go_available():
        pytest.skip("Go toolchain not on PATH")
    build_gopeer()
    with go_server(scenario, extra=["--blocking-send"]) as go:
        answer = _rpc(go.url, "message/stream", _message())
    peer = ReplayPeer(stream_chunks=[answer])
    stack = contextlib.AsyncExitStack()

    async def upstream() -> str:
        return await stack.enter_async_context(serving(peer))

    before = relayed.copy()
    with proxies_of(upstream()) as proxies:
        assert_same(proxies, answer)
        proxies.run(stack.aclose())
    if scenario == "tool":  # its eight preprocessing frames are bare updates
        assert relayed["bare"] - before["bare"] == 8
        # The answer's three deltas: the A2A door's are learnt from the first (which
        # wrote the artifact every later one appends to), so two are relayed.
        assert relayed["A2aRelay"] - before["A2aRelay"] == 2


def test_a_finished_run_is_freed_without_the_garbage_collector(
    replay: tuple[ReplayPeer, Proxies],
) -> None:
    """A relayed run leaves no reference cycle: its live task, relay and text runs go
    when the run does, not at the collector's next pass (which, on a busy proxy, costs
    more than a run's decoding)."""
    peer, proxies = replay
    peer.stream_chunks = [
        (ROOT / "interop" / "go" / "testdata" / "sse_v0" / "tool.sse").read_bytes()
    ]
    gc.collect()
    flags = gc.get_debug()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds is kept in gc.garbage
    try:
        proxies.both("message/stream", _message())
        proxies.both_agui()
        gc.collect()
        cyclic = collections.Counter(
            type(o).__name__ for o in gc.garbage if isinstance(o, (LiveTask, Relay, TextRun))
        )
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
    assert not cyclic


# --- generated streams ---------------------------------------------------------------------

_IDS = st.sampled_from(["chatcmpl-1", "chatcmpl-2", ""])
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=5)
_THOUGHT = st.sampled_from([None, None, {"thought": True}, {"adk_thought": True, "thought": True}])
#: Mostly text, sometimes empty (a delta without text is not relayed).
_DELTA_TEXT = st.one_of(_TEXT.filter(bool), _TEXT.filter(bool), st.just(""))


def _text_part(text: str, thought: dict[str, Any] | None) -> dict[str, Any]:
    part: dict[str, Any] = {"kind": "text", "text": text}
    if thought:
        part["metadata"] = thought
    return part


def _artifact(
    artifact_id: str,
    parts: list[dict[str, Any]] | None,
    metadata: dict[str, Any],
    *,
    append: bool | None = None,
    copy: bool = False,
    last: bool = False,
) -> dict[str, Any]:
    artifact: dict[str, Any] = {"artifactId": artifact_id, "parts": parts}
    if copy:
        artifact["metadata"] = dict(metadata)
    result: dict[str, Any] = {
        "artifact": artifact,
        "contextId": "ctx-up",
        "kind": "artifact-update",
        "lastChunk": last,
        "taskId": "task-up",
    }
    if metadata:
        result["metadata"] = metadata
    if append is not None:
        result["append"] = append
    return result


def _status(state: str, *, metadata: dict[str, Any] | None = None, text: str = "") -> Any:
    status: dict[str, Any] = {"state": state, "timestamp": "2026-01-01T00:00:00Z"}
    if text:
        status["message"] = {
            "kind": "message",
            "messageId": "msg-up",
            "role": "agent",
            "parts": [{"kind": "text", "text": text}],
        }
    result: dict[str, Any] = {
        "contextId": "ctx-up",
        "final": state in ("completed", "failed", "canceled"),
        "kind": "status-update",
        "status": status,
        "taskId": "task-up",
    }
    if metadata:
        result["metadata"] = metadata
    return result


@st.composite
def _delta_shape(draw: st.DrawFn) -> tuple[str, dict[str, Any], dict[str, Any] | None, Any]:
    """Everything about a response's deltas but their text, as trpc's servers give them
    (Go v0: no append, no artifact metadata; v1 and the bridge: both)."""
    response_id = draw(_IDS)
    metadata: dict[str, Any] = {"object_type": "chat.completion.chunk"}
    if response_id:
        metadata["llm_response_id"] = response_id
    if draw(st.booleans()):
        metadata["tag"] = draw(st.sampled_from(["", "t1"]))
    artifact_id = draw(st.sampled_from([response_id, "other"]))
    options = {"append": draw(st.sampled_from([None, False, True])), "copy": draw(st.booleans())}
    return artifact_id, metadata, draw(_THOUGHT), options


def _deltas(
    shape: tuple[str, dict[str, Any], dict[str, Any] | None, Any], texts: list[str]
) -> list[Any]:
    artifact_id, metadata, thought, options = shape
    return [_artifact(artifact_id, [_text_part(t, thought)], metadata, **options) for t in texts]


@st.composite
def _other(draw: st.DrawFn) -> list[Any]:
    """One frame of another kind."""
    response_id = draw(_IDS)
    kind = draw(
        st.sampled_from(["completion", "empty", "preprocessing", "tool", "plain", "working"])
    )
    meta: dict[str, Any] = {"llm_response_id": response_id} if response_id else {}
    if kind == "completion":
        parts = [_text_part(t, th) for t, th in draw(st.lists(st.tuples(_TEXT, _THOUGHT)))]
        return [_artifact(response_id, parts, {**meta, "object_type": "chat.completion"})]
    if kind == "empty":
        return [_artifact(response_id, [], {**meta, "object_type": "chat.completion.chunk"})]
    if kind == "preprocessing":  # trpc's bare updates, a few in a row as Go writes them
        steps = draw(st.lists(st.sampled_from(["basic", "instruction", "content"]), min_size=1))
        parts = draw(st.sampled_from([None, []]))
        return [_artifact("", parts, {"object_type": f"preprocessing.{s}"}) for s in steps]
    if kind == "tool":
        call = {"args": '{"city":"x"}', "id": "call_1", "name": "get", "type": "function"}
        part = {"kind": "data", "data": call, "metadata": {"type": "function_call"}}
        return [_artifact(response_id, [part], {**meta, "object_type": "chat.completion"})]
    if kind == "plain":
        return [_artifact("a1", [_text_part(draw(_TEXT), None)], {})]
    return [_status("working", text=draw(_TEXT))]


_END = st.sampled_from(["completed", "failed", "input-required", "none"])


def _ending(end: str) -> list[Any]:
    if end == "completed":
        return [_artifact("", [], {}, last=True), _status("completed")]
    if end == "failed":
        error = {"object_type": "error", "error_type": "flow_error", "error_message": "boom"}
        return [_status("failed", metadata=error, text="boom")]
    if end == "input-required":
        return [_status("input-required", text="more?")]
    return []  # the stream ends before the task: recovery with tasks/get


@st.composite
def _streams(draw: st.DrawFn) -> tuple[bool, list[list[Any]], str]:
    """A stream: runs of deltas of a few shapes, taking turns, among other frames."""
    shapes = draw(st.lists(_delta_shape(), min_size=1, max_size=3))
    runs = st.tuples(st.sampled_from(shapes), st.lists(_DELTA_TEXT, min_size=1, max_size=9))
    segment = st.one_of(runs.map(lambda run: _deltas(*run)), _other())
    return draw(st.booleans()), draw(st.lists(segment, max_size=8)), draw(_END)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(_streams())
def test_generated_streams(
    replay: tuple[ReplayPeer, Proxies], stream: tuple[bool, list[list[Any]], str]
) -> None:
    submitted, segments, end = stream
    results = [_status("submitted")] if submitted else []
    results += [frame for segment in segments for frame in segment] + _ending(end)
    body = b"".join(go_sse_frame(r) for r in results)
    peer, proxies = replay
    peer.stream_chunks = [body]
    assert_same(proxies, body)


def test_a_key_written_otherwise_is_not_relayed_as_before(
    replay: tuple[ReplayPeer, Proxies],
) -> None:
    """Deltas of one key before and after a tool call: on AG-UI the call closes the text
    message, so the next delta of the key opens another one; the key's old template
    (with the closed message's id) must not be used for the deltas after it."""
    peer, proxies = replay
    delta = {"object_type": "chat.completion.chunk"}
    call = {"args": "{}", "id": "call_1", "name": "get", "type": "function"}
    tool = _artifact(
        "chatcmpl-1",
        [{"kind": "data", "data": call, "metadata": {"type": "function_call"}}],
        {"llm_response_id": "chatcmpl-1", "object_type": "chat.completion"},
    )
    results = [*_deltas(("", delta, None, {}), ["a", "b", "c"]), tool]
    results += _deltas(("", delta, None, {}), ["d", "e", "f"]) + _ending("completed")
    body = b"".join(go_sse_frame(r) for r in results)
    peer.stream_chunks = [body]
    assert_same(proxies, body)


# --- thinking text and the redaction policy ------------------------------------------------

_SECRET = "sk-" + "a1B2" * 8


def _thinking_stream(pieces: list[str]) -> bytes:
    thought = {"thought": True}
    metadata = {"llm_response_id": "chatcmpl-1", "object_type": "chat.completion.chunk"}
    results = [_status("submitted")]
    results += [_artifact("chatcmpl-1", [_text_part(p, thought)], metadata) for p in pieces]
    results += _ending("completed")
    return b"".join(go_sse_frame(r) for r in results)


@pytest.fixture
def no_redaction() -> Iterator[None]:
    redaction.install(redaction.OFF)
    try:
        yield
    finally:
        redaction.install(redaction.Redaction())


def test_thinking_is_not_relayed_while_it_is_redacted(
    replay: tuple[ReplayPeer, Proxies], relayed: collections.Counter[str]
) -> None:
    """The runner masks thinking text by its content, so the relay leaves it alone: a key
    split over deltas comes out masked on both paths."""
    peer, proxies = replay
    pieces = [f"step {i} " for i in range(20)] + [_SECRET[:10], _SECRET[10:], " done"]
    body = _thinking_stream(pieces)
    peer.stream_chunks = [body]
    before = relayed.copy()
    relay, _ = proxies.both("message/stream", _message())
    assert relayed == before
    assert _SECRET[10:] not in relay.decode() and redaction.MASK in relay.decode()
    assert_same(proxies, body)


def test_thinking_is_relayed_without_redaction(
    replay: tuple[ReplayPeer, Proxies], relayed: collections.Counter[str], no_redaction: None
) -> None:
    peer, proxies = replay
    body = _thinking_stream([f"step {i} " for i in range(30)])
    peer.stream_chunks = [body]
    before = relayed.copy()
    assert_same(proxies, body)
    assert relayed["A2aRelay"] - before["A2aRelay"] > 20
    assert relayed["AguiRelay"] - before["AguiRelay"] > 20


def test_interleaved_responses(
    replay: tuple[ReplayPeer, Proxies], relayed: collections.Counter[str]
) -> None:
    """Two responses streaming by turns: on AG-UI each turn closes the other's message
    and opens its own, so a delta after the other response's is not relayed there."""
    peer, proxies = replay
    results = [_status("submitted")]
    for turn in range(4):
        response_id = f"chatcmpl-{turn % 2}"
        metadata = {"llm_response_id": response_id, "object_type": "chat.completion.chunk"}
        results += [
            _artifact(response_id, [_text_part(f"{turn}.{i} ", None)], metadata) for i in range(5)
        ]
    results += _ending("completed")
    body = b"".join(go_sse_frame(r) for r in results)
    peer.stream_chunks = [body]
    before = relayed.copy()
    assert_same(proxies, body)
    assert relayed["A2aRelay"] - before["A2aRelay"] > 10
    assert relayed["AguiRelay"] - before["AguiRelay"] > 5
