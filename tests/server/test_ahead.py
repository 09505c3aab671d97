"""A proxied run's upstream request sent ahead of the run (``server/proxying/ahead.py``):
the same request and the same answer as one the run sends itself, nothing sent ahead
where the run's span must come first, a metered run's meters started at the send, and a
request whose answer nobody reads given up.

A proxy as ``trpc-bridge proxy`` runs it (a ``BridgeServer`` serving a ``RemoteAgent``)
in front of an upstream replaying trpc-agent-go's recorded tool answers, asked the same
call three times by a caller with a trace context, baggage and a user id: its first run
opens the upstream connection itself (none is kept alive yet), the next ones find one
and are sent ahead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from replay_server import Recorded, ReplayPeer, serving

from trpc_bridge.client import RemoteAgent
from trpc_bridge.client.passthrough import Ahead
from trpc_bridge.codecs.encoding import EncodeOptions, RunTarget
from trpc_bridge.codecs.trpc.runs import StreamEncoder, UnaryEncoder
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.options import OpsOptions
from trpc_bridge.server.proxying.unary_relay import UnaryRelay
from trpc_bridge.server.tasks.live_task import LiveTask
from trpc_bridge.telemetry.metrics import BridgeMetrics

from .helpers import go_message, jsonrpc
from .test_relay_equivalence import normalised

ROOT = Path(__file__).resolve().parents[2]
GO = ROOT / "interop" / "go" / "testdata"
TOOL_STREAM = (GO / "tool_stream_v0.sse").read_bytes()
TOOL_SEND = json.loads((GO / "tool_send_v0.json").read_bytes())["result"]

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER = {
    "traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01",
    "baggage": "tenant=acme",
    "X-User-ID": "alice",
}
#: What the upstream is told beside the message: the same whichever way it was sent.
FORWARDED = ("traceparent", "tracestate", "baggage", "x-user-id", "content-type", "accept")
_UNARY_TASK_ID = re.compile(rb"task-m\d+-[0-9a-f]+")


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[Ahead | None]:
    """What each ``RemoteAgent.send_ahead`` call returned (None: nothing was sent)."""
    returned: list[Ahead | None] = []
    send_ahead: Callable[..., Ahead | None] = RemoteAgent.send_ahead

    def spied(self: RemoteAgent, *args: Any, **kwargs: Any) -> Ahead | None:
        ahead = send_ahead(self, *args, **kwargs)
        returned.append(ahead)
        return ahead

    monkeypatch.setattr(RemoteAgent, "send_ahead", spied)
    return returned


def _started(monkeypatch: pytest.MonkeyPatch, cls: type, method: str) -> list[float | None]:
    """The ``started`` each call of ``cls.method`` was given."""
    given: list[float | None] = []
    original: Callable[..., Any] = getattr(cls, method)

    def spied(self: Any, *args: Any, **kwargs: Any) -> Any:
        given.append(kwargs.get("started"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, method, spied)
    return given


@contextlib.asynccontextmanager
async def _proxy(
    peer: ReplayPeer, provider: trace.TracerProvider, ops: OpsOptions | None = None
) -> AsyncIterator[str]:
    ops = ops if ops is not None else OpsOptions()
    options = ServerOptions(port=0, grpc_port=None, tracer_provider=provider, ops=ops)
    async with (
        serving(peer),
        await RemoteAgent.connect(peer.url, tracer_provider=provider) as remote,
        BridgeServer(remote, options) as server,
    ):
        yield server.jsonrpc_url


def _call(method: str, n: int) -> dict[str, Any]:
    message = go_message("weather in Beijing?", message_id=f"m{n}")
    return jsonrpc(method, {"message": message})


async def _ask(url: str, method: str, times: int) -> list[bytes]:
    async with httpx.AsyncClient(timeout=30) as http:
        answers = []
        for n in range(times):
            response = await http.post(url, json=_call(method, n), headers=CALLER)
            assert response.status_code == 200
            answers.append(response.content)
        return answers


def _asked(call: Recorded) -> tuple[Any, ...]:
    """An upstream request without what each one mints anew (its JSON-RPC id, its message
    id, the proxy's context id for the task)."""
    body = json.loads(json.dumps(call.body))
    body.pop("id")
    message = body["params"]["message"]
    assert message.pop("messageId") and message.pop("contextId")
    return call.method, call.path, {k: call.headers.get(k) for k in FORWARDED}, body


@pytest.mark.parametrize("method", ["message/stream", "message/send"])
async def test_a_request_sent_ahead_is_the_request_its_run_would_send(
    monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    sent = _spy(monkeypatch)
    peer = ReplayPeer(stream_chunks=[TOOL_STREAM], send_result=TOOL_SEND)
    async with _proxy(peer, trace.NoOpTracerProvider()) as url:
        answers = await _ask(url, method, 3)
    assert [ahead is not None for ahead in sent] == [False, True, True]
    first, *others = [_asked(call) for call in peer.calls]
    assert first[2]["traceparent"] == CALLER["traceparent"]  # forwarded, tracing off
    assert first[2]["baggage"] == CALLER["baggage"]
    assert first[2]["x-user-id"] == "alice"
    assert others == [first, first]
    upstream = TOOL_STREAM + json.dumps(TOOL_SEND).encode()
    named = [normalised(_UNARY_TASK_ID.sub(b"task-m-<n>", a), upstream) for a in answers]
    assert named[1:] == [named[0], named[0]]
    assert b"It is 20" in answers[2]


async def test_nothing_is_sent_ahead_of_a_traced_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its request carries its own span's context, which exists only once it runs."""
    sent = _spy(monkeypatch)
    peer = ReplayPeer(stream_chunks=[TOOL_STREAM])
    async with _proxy(peer, TracerProvider()) as url:
        await _ask(url, "message/stream", 3)
    assert sent == []
    for call in peer.calls:
        parent = call.headers["traceparent"].split("-")
        assert parent[1] == TRACE_ID and parent[2] != "00f067aa0ba902b7"  # the proxy's span


@pytest.mark.parametrize("method", ["message/stream", "message/send"])
async def test_a_metered_run_is_sent_ahead_and_timed_from_the_send(
    monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    """With metrics on, the run's meter and its call's (the remote agent's) start when
    the request left, before the run did; every run is still timed."""
    sent = _spy(monkeypatch)
    served = _started(monkeypatch, BridgeMetrics, "run")
    called = _started(monkeypatch, RemoteAgent, "run")
    reader = InMemoryMetricReader()
    ops = OpsOptions(meter_provider=MeterProvider(metric_readers=[reader]))
    peer = ReplayPeer(stream_chunks=[TOOL_STREAM], send_result=TOOL_SEND)
    async with _proxy(peer, trace.NoOpTracerProvider(), ops) as url:
        answers = await _ask(url, method, 3)
    assert b"It is 20" in answers[2]
    assert sent[0] is None and sent[1] is not None and sent[2] is not None
    times = [None, sent[1].sent.at, sent[2].sent.at]
    assert served == times and called == times
    data = reader.get_metrics_data()
    assert data is not None
    counts = [
        getattr(point, "count", 0)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "gen_ai.server.request.duration"
        for point in metric.data.data_points
    ]
    assert sum(counts) == 3


async def test_a_request_whose_answer_is_not_read_is_given_up() -> None:
    """A run cancelled before its first step never reads the answer: the producer's
    ``when_done`` (where the runner drops a request sent ahead) still runs, and the
    request's connection closes instead of going back to the pool."""
    peer = ReplayPeer(stream_chunks=[TOOL_STREAM], send_result=TOOL_SEND)
    request = AgentRequest(text="hi", context_id="c1")
    async with serving(peer), await RemoteAgent.connect(peer.url) as remote:
        relay = UnaryRelay(remote, UnaryEncoder(RunTarget("t1", "c1", EncodeOptions())))
        assert not relay.send_ahead(request)  # nothing kept alive yet
        assert [event async for event in remote.run(request)]  # now a connection is
        assert relay.send_ahead(request)
        ahead = relay._ahead
        assert ahead is not None

        async def never_read() -> AsyncGenerator[AgentEvent]:
            yield AgentEvent.final_text("unread", "r1")  # pragma: no cover

        live = LiveTask(
            task_id="t1", context_id="c1", owner="", user_message=ahead.message, coalesce_after=8
        )
        live.start(never_read(), StreamEncoder(RunTarget("t1", "c1", EncodeOptions())))
        live.when_done(relay.drop_ahead)
        live.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await live.wait()
        await asyncio.sleep(0)
        assert relay.ahead() is None
        transport = ahead.sent.connection.transport
        assert transport is not None and transport.is_closing()
