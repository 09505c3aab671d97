"""One trace across a real a2a-sdk client and a real a2a-sdk server, per transport."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import pytest
from a2a.client import ClientCallContext
from opentelemetry import baggage, trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind
from span_capture import Tracing

from trpc_bridge.telemetry.client import invoke_agent_span
from trpc_bridge.telemetry.spans import AgentCall

from .loopback import AGENT_NAME, call, connect, serve, user_message

# (protocol binding, A2A version of the interface)
TRANSPORTS = [("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "1.0"), ("GRPC", "1.0")]
SPAN_NAME = f"invoke_agent {AGENT_NAME}"


def _of_kind(spans: Sequence[ReadableSpan], kind: SpanKind) -> list[ReadableSpan]:
    return [span for span in spans if span.kind == kind and span.name == SPAN_NAME]


def _server_done(spans: Sequence[ReadableSpan]) -> bool:
    return bool(_of_kind(spans, SpanKind.SERVER))


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "unary"])
@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
async def test_client_and_server_spans_form_one_trace(
    tracing: Tracing, binding: str, version: str, streaming: bool
) -> None:
    async with serve(tracer_provider=tracing.provider) as server:
        async with connect(
            server,
            binding,
            protocol_version=version,
            streaming=streaming,
            tracer_provider=tracing.provider,
        ) as client:
            request = user_message()
            call_info = AgentCall(
                transport=binding,
                protocol_version=version,
                conversation_id=request.message.context_id,
            )
            with invoke_agent_span(
                AGENT_NAME, call_info, tracer_provider=tracing.provider
            ) as invocation:
                responses = await call(client, request, invocation.call_context())
        assert responses
        spans = await tracing.wait_for(_server_done)

    [client_span] = _of_kind(spans, SpanKind.CLIENT)
    # One SERVER span per request, however many SSE events / stream messages it had.
    [server_span] = _of_kind(spans, SpanKind.SERVER)
    assert server_span.context.trace_id == client_span.context.trace_id
    assert server_span.parent is not None
    assert server_span.parent.span_id == client_span.context.span_id
    assert server_span.parent.is_remote
    # The agent ran inside the server span.
    [seen] = server.seen
    assert seen.span_context.span_id == server_span.context.span_id
    attributes = server_span.attributes or {}
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.agent.name"] == AGENT_NAME
    assert attributes["gen_ai.conversation.id"] == request.message.context_id
    assert attributes["a2a.transport"] == binding
    assert attributes["a2a.protocol.version"] == version
    assert (client_span.attributes or {})["gen_ai.conversation.id"] == request.message.context_id


@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
async def test_baggage_reaches_the_agent(tracing: Tracing, binding: str, version: str) -> None:
    async with (
        serve(tracer_provider=tracing.provider) as server,
        connect(
            server, binding, protocol_version=version, tracer_provider=tracing.provider
        ) as client,
    ):
        with invoke_agent_span(
            AGENT_NAME,
            parent=baggage.set_baggage("tenant", "acme"),
            tracer_provider=tracing.provider,
        ) as invocation:
            await call(client, user_message(), invocation.call_context())
    assert server.seen[0].baggage == {"tenant": "acme"}


@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
async def test_malformed_traceparent_starts_a_fresh_trace(
    tracing: Tracing, binding: str, version: str
) -> None:
    bad = ClientCallContext(service_parameters={"traceparent": "00-not-a-trace-01"})
    async with serve(tracer_provider=tracing.provider) as server:
        async with connect(server, binding, protocol_version=version, traced=False) as client:
            responses = await call(client, user_message(), bad)
        spans = await tracing.wait_for(_server_done)
    assert responses[-1].HasField("status_update") or responses[-1].HasField("task")
    [server_span] = _of_kind(spans, SpanKind.SERVER)
    assert server_span.parent is None
    assert server_span.context.is_valid
    assert server.seen[0].traceparent == "00-not-a-trace-01"


async def test_malformed_traceparent_on_raw_jsonrpc_post(tracing: Tracing) -> None:
    """The same over a hand-written JSON-RPC 0.3 request, as a Go peer would send it."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {
                "kind": "message",
                "messageId": "m1",
                "contextId": "ctx-raw",
                "role": "user",
                "parts": [{"kind": "text", "text": "hi"}],
            }
        },
    }
    async with serve(tracer_provider=tracing.provider) as server:
        async with httpx.AsyncClient() as http:
            response = await http.post(
                f"{server.base_url}/v03", json=body, headers={"traceparent": "garbage"}
            )
        spans = await tracing.wait_for(_server_done)
    assert response.status_code == 200
    assert "result" in response.json()
    [server_span] = _of_kind(spans, SpanKind.SERVER)
    assert server_span.parent is None
    assert (server_span.attributes or {})["gen_ai.conversation.id"] == "ctx-raw"
    assert (server_span.attributes or {})["a2a.protocol.version"] == "0.3"


@pytest.mark.parametrize(("binding", "version"), TRANSPORTS)
async def test_tracing_off_sends_no_headers_and_runs_untraced(
    tracing: Tracing, binding: str, version: str
) -> None:
    off = trace.NoOpTracerProvider()
    async with (
        serve(tracer_provider=off) as server,
        connect(server, binding, protocol_version=version, tracer_provider=off) as client,
    ):
        with invoke_agent_span(AGENT_NAME, tracer_provider=off) as invocation:
            await call(client, user_message(), invocation.call_context())
    [seen] = server.seen
    assert seen.traceparent is None
    assert not seen.span_context.is_valid
    assert invocation.context is None


async def test_non_message_calls_are_not_traced(tracing: Tracing) -> None:
    """Card fetches and task reads get no span, as in trpc-agent-go."""
    async with serve(tracer_provider=tracing.provider) as server, httpx.AsyncClient() as http:
        card = await http.get(f"{server.base_url}/.well-known/agent-card.json")
        rpc = await http.post(
            f"{server.base_url}/",
            json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}},
            headers={"A2A-Version": "1.0"},
        )
    assert card.status_code == 200
    assert "error" in rpc.json()
    assert tracing.exporter.get_finished_spans() == ()


async def test_user_id_and_content_only_with_record_content(tracing: Tracing) -> None:
    headers = {"x-user-id": "alice"}
    for record in (False, True):
        tracing.exporter.clear()
        async with serve(tracer_provider=tracing.provider, record_content=record) as server:
            async with connect(server, "JSONRPC", tracer_provider=tracing.provider) as client:
                await call(
                    client,
                    user_message("secret question"),
                    ClientCallContext(service_parameters=dict(headers)),
                )
            spans = await tracing.wait_for(_server_done)
        attributes = _of_kind(spans, SpanKind.SERVER)[0].attributes or {}
        assert ("enduser.id" in attributes) is record
        assert ("gen_ai.input.messages" in attributes) is record
        if record:
            assert attributes["enduser.id"] == "alice"
            assert "secret question" in str(attributes["gen_ai.input.messages"])
