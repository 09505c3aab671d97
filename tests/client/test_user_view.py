"""What a user sees of any A2A answer (``docs/wire-spec.md`` §11): ``RemoteAgent``'s
decoder, the ``call`` printer (console and ``--json``) and the proxy's re-encoding
against the executable model (``tests/user_view.py``), on generated runs
(``tests/user_view_runs.py``), streamed and unary, on both wires.

Seeded and derandomised (the same cases on every run). A case that once failed is kept
as a vector (``tests/vectors/UV*.json``) and replayed by :func:`test_kept_vector`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from user_view import Shown, UserView, stream_view, unary_view
from user_view_harness import (
    Caller,
    Proxy,
    Upstream,
    events_view,
    json_lines_view,
    printed,
    run_events,
)
from user_view_runs import Run, expected_stream, expected_unary, runs, stream_json, unary_json
from vector_files import VECTORS

from trpc_bridge.codecs.a2a.frames import read_result

CASES = settings(
    max_examples=2000,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as runner:
        yield runner


@pytest.fixture(scope="module")
def upstream(loop: asyncio.Runner) -> Iterator[Upstream]:
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
    run: Run, loop: asyncio.Runner, upstream: Upstream
) -> None:
    model_stream, model_unary = _views(run)
    assert model_stream == expected_stream(run)
    assert model_unary == expected_unary(run)
    upstream.replay(stream_json(run), unary_json(run))
    agent = upstream.agent(run.wire)
    for streaming, model in ((True, model_stream), (False, model_unary)):
        events = loop.run(run_events(agent, stream=streaming))
        assert events_view(events) == model, f"stream={streaming}"
        console, lines = printed(events)
        assert json_lines_view(lines) == model, f"--json, stream={streaming}"
        if not console.replaced:
            assert (console.text, console.reasoning) == (model.answer, model.reasoning)
            assert console.tools == [t for m in model.messages for t in m.tools]


def _view(data: dict[str, object]) -> UserView:
    messages = data["messages"]
    assert isinstance(messages, list)
    shown = tuple(Shown(m["id"], m["text"], m["reasoning"], tuple(m["tools"])) for m in messages)
    error = data["error"]
    return UserView(shown, error if isinstance(error, str) else None)


KEPT = sorted(VECTORS.glob("UV*.json"))


@pytest.mark.parametrize("path", KEPT, ids=[p.stem for p in KEPT])
def test_kept_vector(path: Path, loop: asyncio.Runner, upstream: Upstream) -> None:
    """A generated case that once failed: the model still reads it so, and the decoder
    and the printer show it."""
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


@pytest.fixture(scope="module")
def proxies(loop: asyncio.Runner, upstream: Upstream) -> Iterator[dict[str, Proxy]]:
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
    loop: asyncio.Runner,
    upstream: Upstream,
    proxies: dict[str, Proxy],
) -> None:
    """Whatever path the proxy takes, its caller sees what a caller of the upstream sees
    (the proxy reads its upstream as a stream)."""
    upstream.replay(stream_json(run), unary_json(run))
    proxied, frames = loop.run(proxies[run.wire].view(caller))
    model, _ = _views(run)
    ids = {m.id for m in model.messages if m.id}
    want = _as_proxied(model, caller, ids)
    got = _as_proxied(proxied, caller, ids)
    if caller.trpc or caller.stream:
        assert got.merged() == want.merged(), frames
    else:  # a plain direct reply is one Message with the whole answer (§3.1)
        assert (got.answer, got.error) == (want.answer, want.error), frames
