"""The trace view's span buffer: fed by this process's spans and by another process's
OTLP/HTTP export (the SDK's own exporter, posting to the bridge), bounded, and read by
trace; plus the ``traceparent`` form the bridge writes for Go peers."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.options import OpsOptions
from trpc_bridge.telemetry.span_buffer import OtlpError, SpanBuffer
from trpc_bridge.telemetry.trace_context import W3C_PROPAGATOR


async def test_another_process_exports_into_the_trace_view() -> None:
    buffer = SpanBuffer()
    ops = OpsOptions(span_buffer=buffer)
    async with (
        BridgeServer(demo_agent(), ServerOptions(grpc_port=None, ops=ops)) as server,
        httpx.AsyncClient(timeout=30) as http,
    ):
        base = f"http://127.0.0.1:{server.http_port}"
        other = TracerProvider(resource=Resource.create({"service.name": "upstream"}))
        exporter = OTLPSpanExporter(endpoint=f"{base}/v1/traces")
        other.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = other.get_tracer("t")

        def spans() -> int:  # in a thread: the exporter posts synchronously
            with (
                tracer.start_as_current_span("outer") as outer,
                tracer.start_as_current_span("inner", attributes={"k": "v" * 1000}),
            ):
                pass
            return outer.get_span_context().trace_id

        trace_id = f"{await asyncio.to_thread(spans):032x}"
        shown = (await http.get(f"{base}/playground/traces/{trace_id}")).json()["spans"]
        assert [(s["name"], s["service"], s["kind"]) for s in shown] == [
            ("outer", "upstream", "INTERNAL"),
            ("inner", "upstream", "INTERNAL"),
        ]
        assert shown[1]["parentSpanId"] == shown[0]["spanId"]
        assert shown[0]["startUs"] == 0 and shown[1]["durationUs"] >= 0
        assert len(shown[1]["attributes"]["k"]) == 300  # cut to VALUE_LIMIT
        unknown = await http.get(f"{base}/playground/traces/{'0' * 31}1")
        assert unknown.json() == {"spans": []}
        garbage = await http.post(
            f"{base}/v1/traces",
            content=b"\xff\x00 not protobuf",
            headers={"content-type": "application/x-protobuf"},
        )
        assert garbage.status_code == 400
        as_json = await http.post(f"{base}/v1/traces", json={"resourceSpans": []})
        assert as_json.status_code == 415
        other.shutdown()


async def test_without_a_buffer_there_is_no_trace_view() -> None:
    async with (
        BridgeServer(demo_agent(), ServerOptions(grpc_port=None)) as server,
        httpx.AsyncClient(timeout=30) as http,
    ):
        base = f"http://127.0.0.1:{server.http_port}"
        assert (await http.get(f"{base}/playground/traces/{'ab' * 16}")).status_code == 404
        refused = await http.post(
            f"{base}/v1/traces", content=b"", headers={"content-type": "application/x-protobuf"}
        )
        assert refused.status_code != 200


def test_the_buffer_is_bounded() -> None:
    buffer = SpanBuffer(max_traces=2, max_spans=3)
    provider = TracerProvider()
    provider.add_span_processor(buffer)
    tracer = provider.get_tracer("t")
    ids = []
    for _ in range(3):
        with tracer.start_as_current_span("root") as root:
            for _ in range(5):
                with tracer.start_as_current_span("child"):
                    pass
        ids.append(f"{root.get_span_context().trace_id:032x}")
    assert buffer.spans(ids[0]) == []  # the oldest trace went whole
    assert [len(buffer.spans(trace_id)) for trace_id in ids[1:]] == [3, 3]
    assert buffer.spans("not hex") == []
    with pytest.raises(OtlpError):
        buffer.add_otlp(b"\x0a\x05trunc")


@pytest.mark.parametrize(("flags", "written"), [(0x03, "01"), (0x02, "00"), (0x01, "01")])
def test_traceparent_is_written_in_its_level_1_form(flags: int, written: str) -> None:
    """Go's OpenTelemetry before W3C level 2 (trpc-agent-go's) refuses version-00 headers
    with the random-trace-id flag: the bridge writes the sampled bit alone."""
    context = trace.SpanContext(
        trace_id=0x4BF92F3577B34DA6A3CE929D0E0E4736,
        span_id=0x00F067AA0BA902B7,
        is_remote=False,
        trace_flags=trace.TraceFlags(flags),
    )
    carrier: dict[str, str] = {}
    W3C_PROPAGATOR.inject(carrier, trace.set_span_in_context(trace.NonRecordingSpan(context)))
    assert (
        carrier["traceparent"] == f"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-{written}"
    )
    # Read back the same way (the SDK reads either form).
    read = trace.get_current_span(W3C_PROPAGATOR.extract(carrier)).get_span_context()
    assert (read.trace_id, read.span_id) == (context.trace_id, context.span_id)
