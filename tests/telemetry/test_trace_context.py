"""The shortcut reading of ``traceparent`` gives the context the SDK's propagator gives."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry import baggage, propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from trpc_bridge.telemetry.setup import set_w3c_propagator
from trpc_bridge.telemetry.trace_context import extract


@pytest.fixture(autouse=True)
def w3c_propagator() -> Iterator[None]:
    before = propagate.get_global_textmap()
    set_w3c_propagator()
    yield
    propagate.set_global_textmap(before)


def seen(context: Context) -> tuple[object, ...]:
    span_context = trace.get_current_span(context).get_span_context()
    return (
        span_context.trace_id,
        span_context.span_id,
        span_context.is_remote,
        span_context.trace_flags,
        tuple(span_context.trace_state.items()),
        dict(baggage.get_all(context)),
    )


_hex = st.text("0123456789abcdef", min_size=1, max_size=1)


def _hex_of(size: int) -> st.SearchStrategy[str]:
    return st.one_of(
        st.just("0" * size),
        st.text("0123456789abcdef", min_size=size, max_size=size),
        st.text("0123456789abcdefABCDEFxyz-", min_size=size - 1, max_size=size + 1),
    )


@st.composite
def traceparents(draw: st.DrawFn) -> str:
    version = draw(st.sampled_from(["00", "01", "cc", "ff", "0g", "AB"]))
    fields = [version, draw(_hex_of(32)), draw(_hex_of(16)), draw(_hex_of(2))]
    header = draw(st.sampled_from(["-", "_"])).join(fields)
    if draw(st.booleans()):
        header = draw(st.sampled_from(["", " ", "\t"])) + header
        header += draw(st.sampled_from(["", " ", "-extra", "-"]))
    return header


@st.composite
def carriers(draw: st.DrawFn) -> dict[str, str]:
    carrier = {"traceparent": draw(traceparents()), "content-type": "application/json"}
    if draw(st.integers(0, 4)) == 0:
        carrier["tracestate"] = draw(st.sampled_from(["vendor=value", "a=1,b=2", "bad state"]))
    if draw(st.integers(0, 4)) == 0:
        carrier["baggage"] = draw(st.sampled_from(["user=alice", "k=v;p=1", "%%"]))
    return carrier


@settings(max_examples=500, deadline=None)
@given(carrier=carriers())
def test_same_context_as_the_sdk(carrier: dict[str, str]) -> None:
    assert seen(extract(carrier)) == seen(propagate.extract(carrier))


def test_canonical_header_takes_the_shortcut_to_the_same_parent() -> None:
    header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    parent = trace.get_current_span(extract({"traceparent": header})).get_span_context()
    assert parent.trace_id == 0x4BF92F3577B34DA6A3CE929D0E0E4736
    assert parent.span_id == 0x00F067AA0BA902B7
    assert parent.is_remote and parent.trace_flags.sampled


def test_another_global_propagator_is_used_as_is() -> None:
    class Recording(TraceContextTextMapPropagator):
        called = 0

        def extract(self, *args: object, **kwargs: object) -> Context:
            Recording.called += 1
            return super().extract(*args, **kwargs)  # type: ignore[arg-type]

    propagate.set_global_textmap(Recording())
    extract({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
    assert Recording.called == 1


def test_no_traceparent_is_no_parent() -> None:
    assert not trace.get_current_span(extract({})).get_span_context().is_valid
