"""What a user sees of any A2A answer (``docs/specs/trpc-interaction.md`` §11): ``RemoteAgent``'s
decoder, the ``call`` printer (console and ``--json``) and the proxy's re-encoding
against the executable model (``tests/user_view.py``), on generated runs
(``tests/user_view_runs.py``), streamed and unary, on both wires.

Seeded and derandomised (the same cases on every run). A case that once failed is kept
as a vector (``tests/vectors/UV*.json``) and replayed by :func:`test_kept_vector`.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from replay_server import ReplayPeer, serving
from user_view import Shown, UserView, stream_view, unary_view
from user_view_harness import (
    PLAIN_CARD,
    Caller,
    Proxy,
    Upstream,
    events_view,
    json_lines_view,
    printed,
    run_events,
    sse,
)
from user_view_runs import (
    Run,
    expected_stream,
    expected_unary,
    runs,
    same_run_shown,
    stream_json,
    unary_json,
)
from vector_files import VECTORS

from trpc_bridge.cli.call import run_call
from trpc_bridge.codecs.a2a.frames import read_result

T = TypeVar("T")

CASES = settings(
    max_examples=2000,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


class Loop:
    """One event loop for a module's examples (hypothesis calls the tests synchronously)."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self._loop.run_until_complete(coroutine)

    def close(self) -> None:
        self._loop.run_until_complete(_cancel_pending())  # servers' watchers, left over
        self._loop.run_until_complete(self._loop.shutdown_asyncgens())
        self._loop.close()


async def _cancel_pending() -> None:
    pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


@pytest.fixture(scope="module")
def loop() -> Iterator[Loop]:
    runner = Loop()
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def upstream(loop: Loop) -> Iterator[Upstream]:
    peer = Upstream()
    yield peer
    loop.run(peer.aclose())


def _views(run: Run) -> tuple[UserView, UserView]:
    stream = stream_view(read_result(f) for f in stream_json(run))
    unary = unary_view(read_result(unary_json(run)))
    return stream.merged(), unary.merged()


@CASES
@given(run=runs())
def test_decoder_and_printer_show_what_the_model_shows(
    run: Run, loop: Loop, upstream: Upstream
) -> None:
    model_stream, model_unary = _views(run)
    assert model_stream == expected_stream(run)
    assert model_unary == expected_unary(run)
    upstream.replay(stream_json(run), unary_json(run))
    agent = upstream.agent(run.wire)
    shown = []
    for streaming, model in ((True, model_stream), (False, model_unary)):
        events = loop.run(run_events(agent, stream=streaming))
        shown.append(events_view(events))
        assert shown[-1] == model, f"stream={streaming}"
        console, lines = printed(events)
        assert json_lines_view(lines) == model, f"--json, stream={streaming}"
        if not console.replaced:
            assert (console.text, console.reasoning) == (model.answer, model.reasoning)
            assert console.tools == [t for m in model.messages for t in m.tools]
    if same_run_shown(run):
        assert shown[0] == shown[1], "streamed and unary"


def _view(data: dict[str, object]) -> UserView:
    messages = data["messages"]
    assert isinstance(messages, list)
    shown = tuple(Shown(m["id"], m["text"], m["reasoning"], tuple(m["tools"])) for m in messages)
    error = data["error"]
    return UserView(shown, error if isinstance(error, str) else None)


KEPT = sorted(VECTORS.glob("UV*.json"))


@pytest.mark.parametrize("path", KEPT, ids=[p.stem for p in KEPT])
def test_kept_vector(path: Path, loop: Loop, upstream: Upstream, proxies: dict[str, Proxy]) -> None:
    """A generated case that once failed: the model still reads it so, and the decoder,
    the printer (and, for a proxy case, the proxy's caller) show it."""
    vector = json.loads(path.read_text())
    expect_stream, expect_unary = _view(vector["expect_stream"]), _view(vector["expect_unary"])
    assert stream_view(read_result(f) for f in vector["stream"]).merged() == expect_stream
    assert unary_view(read_result(vector["unary"])).merged() == expect_unary
    upstream.replay(vector["stream"], vector["unary"])
    agent = upstream.agent(vector["wire"])
    for streaming, expect in ((True, expect_stream), (False, expect_unary)):
        events = loop.run(run_events(agent, stream=streaming))
        assert events_view(events) == expect
        _, lines = printed(events)
        assert json_lines_view(lines) == expect
    if "proxy_caller" in vector:
        _proxy_sees(expect_stream, Caller(**vector["proxy_caller"]), proxies[vector["wire"]], loop)


@pytest.fixture(scope="module")
def proxies(loop: Loop, upstream: Upstream) -> Iterator[dict[str, Proxy]]:
    """``trpc-bridge proxy`` in front of the replaying peer, one per upstream wire."""
    found = {version: Proxy(upstream, version) for version in ("0.3", "1.0")}
    yield found
    for proxy in found.values():
        loop.run(proxy.aclose())


def _as_proxied(view: UserView, caller: Caller, ids: set[str]) -> UserView:
    """What the proxy keeps of a view: plain callers get the answer without reasoning or
    tool calls (§3.1); ids the upstream did not send are the proxy's own."""
    kept = tuple(
        Shown(
            m.id if m.id in ids else "",
            m.text,
            m.reasoning if caller.trpc else "",
            m.tools if caller.trpc else (),
        )
        for m in view.messages
    )
    return UserView(tuple(m for m in kept if m.text or m.reasoning or m.tools), view.error)


callers = st.builds(
    Caller, wire=st.sampled_from(("0.3", "1.0")), trpc=st.booleans(), stream=st.booleans()
)


@settings(CASES, max_examples=400)
@given(run=runs(), caller=callers)
def test_the_proxy_shows_what_the_model_shows(
    run: Run,
    caller: Caller,
    loop: Loop,
    upstream: Upstream,
    proxies: dict[str, Proxy],
) -> None:
    """Whatever path the proxy takes, its caller sees what a caller of the upstream sees
    (the proxy reads its upstream as a stream)."""
    upstream.replay(stream_json(run), unary_json(run))
    model, _ = _views(run)
    _proxy_sees(model, caller, proxies[run.wire], loop)


def _proxy_sees(model: UserView, caller: Caller, proxy: Proxy, loop: Loop) -> None:
    proxied, frames = loop.run(proxy.view(caller))
    ids = {m.id for m in model.messages if m.id}
    want = _as_proxied(model, caller, ids)
    got = _as_proxied(proxied, caller, ids)
    if caller.trpc or caller.stream:
        assert got.merged() == want.merged(), frames
    else:  # a plain direct reply is one Message with the whole answer (§3.1)
        assert (got.answer, got.error) == (want.answer, want.error), frames


@pytest.fixture(scope="module")
def served(loop: Loop) -> Iterator[tuple[ReplayPeer, str]]:
    """The replaying peer on a loopback port, for ``trpc-bridge call`` end to end."""
    peer = ReplayPeer(card=json.loads(json.dumps(PLAIN_CARD)))
    context = serving(peer)
    url = loop.run(context.__aenter__())
    for interface in peer.card["supportedInterfaces"]:
        interface["url"] = url
    yield peer, url
    loop.run(context.__aexit__(None, None, None))


@settings(CASES, max_examples=30)
@given(run=runs(), stream=st.booleans())
def test_call_prints_what_the_model_shows(
    run: Run, stream: bool, loop: Loop, served: tuple[ReplayPeer, str]
) -> None:
    """``trpc-bridge call --json`` over HTTP, card and all: what it prints is the model's
    view, and it exits 1 exactly when the run failed."""
    peer, url = served
    peer.stream_chunks = sse(stream_json(run))
    peer.send_result = unary_json(run)
    model_stream, model_unary = _views(run)
    model = model_stream if stream else model_unary
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = loop.run(run_call(url, "hi", json_lines=True, stream=stream, version=run.wire))
    assert json_lines_view(out.getvalue().splitlines()) == model, err.getvalue()
    assert code == (1 if model.error is not None else 0)
