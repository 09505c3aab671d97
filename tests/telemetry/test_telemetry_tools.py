"""``execute_tool`` spans from tool-call / tool-result events (the runner's use of them:
``tests/server/test_runner.py``)."""

from __future__ import annotations

from opentelemetry import trace
from span_capture import Tracing

from trpc_bridge.events import AgentEvent
from trpc_bridge.names import new_response_id
from trpc_bridge.telemetry.client import invoke_agent_span
from trpc_bridge.telemetry.tools import ToolSpans


def _run() -> list[AgentEvent]:
    rid = new_response_id()
    return [
        AgentEvent.tool_call("weather", {"city": "Paris"}, call_id="call-1", response_id=rid),
        AgentEvent.tool_result("call-1", "weather", {"temp": 21}),
        AgentEvent.tool_call("clock", "{}", call_id="call-2", response_id=new_response_id()),
        AgentEvent.final_text("done", new_response_id()),
    ]


async def test_tool_content_only_with_record_content(tracing: Tracing) -> None:
    tools = ToolSpans(tracer_provider=tracing.provider, record_content=True)
    for event in _run()[:2]:
        tools.observe(event)
    [span] = tracing.exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["gen_ai.tool.call.arguments"] == '{"city": "Paris"}'
    assert span.attributes["gen_ai.tool.call.result"] == '{"temp": 21}'


async def test_client_invocation_marks_failures_but_records_no_tool_span(
    tracing: Tracing,
) -> None:
    """The remote agent's tools ran in the remote process, which records them."""
    with invoke_agent_span("remote", tracer_provider=tracing.provider) as invocation:
        for event in _run()[:2]:
            invocation.observe(event)
        invocation.observe(AgentEvent.failure("boom"))
    [agent] = tracing.exporter.get_finished_spans()
    assert agent.name == "invoke_agent remote"
    assert agent.kind == trace.SpanKind.CLIENT
    assert agent.status.status_code == trace.StatusCode.ERROR
    assert (agent.attributes or {})["error.type"] == "flow_error"
