"""The encoding seam's extension points, as docs/specs/trpc-interaction.md documents them: an
encoding or an overlay registered at run time is chosen, named and applied like a built-in one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from a2a.types import Message, Role

from trpc_bridge.codecs import encoding as seam
from trpc_bridge.codecs.encoding import (
    Encoding,
    EncodingRequest,
    RunTarget,
    StreamEncoding,
    StreamFrame,
    UnaryEncoding,
    encoding_names,
    parse_negotiation,
    register_encoding,
    register_overlay,
    select_encoding,
    stream_encoding,
)
from trpc_bridge.events import AgentEvent

HEADER = "x-test-encoding"


@pytest.fixture(autouse=True)
def _registries() -> Iterator[None]:
    """Registration changes module state: every test gets the built-ins back after it."""
    encodings = dict(seam._encodings())
    overlays = dict(seam._overlay_registry())
    yield
    seam._registry.clear()
    seam._registry.update(encodings)
    seam._overlays.clear()
    seam._overlays.update(overlays)


@dataclass(frozen=True)
class Renamed:
    """Plain A2A under another name, for callers that send :data:`HEADER`."""

    name: str = "test-plain"

    def accepts(self, request: EncodingRequest) -> bool:
        return HEADER in request.headers

    def stream(self, run: RunTarget) -> StreamEncoding:
        return select_encoding("plain", EncodingRequest()).stream(run)

    def unary(self, run: RunTarget) -> UnaryEncoding:
        return select_encoding("plain", EncodingRequest()).unary(run)


class Marker:
    """Wraps a stream encoder and adds one message of its own when the run closes."""

    name = "test-marker"

    def accepts(self, request: EncodingRequest) -> bool:
        return HEADER in request.headers

    def wrap(self, encoder: StreamEncoding, run: RunTarget) -> StreamEncoding:
        return _Marked(encoder)


class _Marked:
    def __init__(self, inner: StreamEncoding) -> None:
        self.inner = inner
        self.done = False

    def start(self, *, app_name: str, user_id: str) -> list[StreamFrame]:
        return self.inner.start(app_name=app_name, user_id=user_id)

    def encode(self, event: AgentEvent) -> list[StreamFrame]:
        frames = self.inner.encode(event)
        self.done = self.inner.done
        return frames

    def close(self) -> list[StreamFrame]:
        return [*self.inner.close(), Message(message_id="marker", role=Role.ROLE_AGENT)]


def test_a_registered_encoding_is_chosen_under_auto_before_plain() -> None:
    custom: Encoding = Renamed()
    register_encoding(custom)
    names = encoding_names()
    assert names.index("test-plain") == names.index("plain") - 1
    asking = EncodingRequest(headers={HEADER: "1"})
    assert select_encoding("auto", asking).name == "test-plain"
    assert select_encoding("auto", EncodingRequest()).name == "plain"


def test_a_registered_encoding_can_be_placed_and_forced_by_name() -> None:
    register_encoding(Renamed(), before="trpc")
    names = encoding_names()
    assert names.index("test-plain") == names.index("trpc") - 1
    assert parse_negotiation("TEST-plain") == "test-plain"
    assert select_encoding("test-plain", EncodingRequest()).name == "test-plain"


def test_registering_a_name_again_replaces_it() -> None:
    register_encoding(Renamed())
    register_encoding(Renamed())
    assert encoding_names().count("test-plain") == 1


def test_a_registered_overlay_wraps_the_streams_it_accepts() -> None:
    register_overlay(Marker())
    run = RunTarget(task_id="t", context_id="c")
    marked = stream_encoding("plain", EncodingRequest(headers={HEADER: "1"}), run)
    plain = stream_encoding("plain", EncodingRequest(), run)
    assert [f.message_id for f in marked.close() if isinstance(f, Message)][-1] == "marker"
    assert not any(isinstance(f, Message) and f.message_id == "marker" for f in plain.close())
