"""``execute_tool`` spans built from the tool-call / tool-result events of a run.

An agent's event stream says when a tool was asked for (an assistant message with
``tool_calls``) and when its result came back (a ``tool.response`` message carrying
``tool_id``); the time in between is the tool's execution.

One tool call is one span, recorded by the process that runs the tool
(``docs/specs/trpc-interaction.md`` §6): the agent runner, for an agent whose tools run in it. The
tool calls a remote agent reports ran in the remote process, which records them; there
the tracker (``tools=False``) only marks the run failed on a terminal error — in the
caller's CLIENT span and in a proxy's SERVER span alike.
"""

from __future__ import annotations

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv.attributes import error_attributes
from opentelemetry.util.types import AttributeValue

from trpc_bridge import redaction
from trpc_bridge.events import AgentEvent
from trpc_bridge.telemetry.spans import (
    OP_EXECUTE_TOOL,
    content_recording,
    get_tracer,
    tracing_enabled,
)


class ToolSpans:
    """Opens an ``execute_tool {name}`` span per tool call and ends it at the tool's result;
    a terminal error event marks the run's own span (the one in ``parent``) failed.

    Spans are children of ``parent`` (an OTel context; default: the context current when
    the tracker is created), so the tracker can be fed from any task. Calls that never get
    a result are ended by :meth:`close` with an error status. With ``tools=False`` no
    ``execute_tool`` span is opened (the tools run in another process).
    """

    def __init__(
        self,
        *,
        parent: otel_context.Context | None = None,
        tracer_provider: trace.TracerProvider | None = None,
        record_content: bool | None = None,
        tools: bool = True,
    ) -> None:
        self._enabled = tracing_enabled(tracer_provider)
        self._tools = tools
        self._provider = tracer_provider
        self._parent = parent if parent is not None else otel_context.get_current()
        self._record_content = content_recording(record_content)
        self._open: dict[str, trace.Span] = {}

    def observe(self, event: AgentEvent) -> None:
        if not self._enabled:
            return
        if event.error is not None and event.is_terminal_error():
            run = trace.get_current_span(self._parent)
            run.set_attribute(error_attributes.ERROR_TYPE, event.error.type)
            run.set_status(trace.StatusCode.ERROR, event.error.message)
        if not self._tools or not event.choices:
            return
        message = event.choices[0].message
        if message.tool_calls and not event.is_partial:
            for call in message.tool_calls:
                self._start(call.id, call.function.name, call.function.arguments)
        for result in event.tool_results:
            self._finish(result.tool_id, result.content)

    def close(self) -> None:
        """End the spans of calls that got no result (the run ended or failed first)."""
        for span in self._open.values():
            span.set_status(trace.StatusCode.ERROR, "no tool result before the run ended")
            span.end()
        self._open.clear()

    def _start(self, call_id: str, name: str, arguments: str) -> None:
        attributes: dict[str, AttributeValue] = {
            gen_ai.GEN_AI_OPERATION_NAME: OP_EXECUTE_TOOL,
            gen_ai.GEN_AI_TOOL_NAME: name,
            gen_ai.GEN_AI_TOOL_CALL_ID: call_id,
        }
        if self._record_content:
            attributes[gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS] = redaction.current().text(arguments)
        # Looked up per tool call (cached), not per run: most runs make none.
        span = get_tracer(self._provider).start_span(
            f"{OP_EXECUTE_TOOL} {name}", context=self._parent, attributes=attributes
        )
        previous = self._open.pop(call_id, None)
        if previous is not None:  # a repeated call id: the first call cannot be matched any more
            previous.end()
        self._open[call_id] = span

    def _finish(self, call_id: str, result: str) -> None:
        span = self._open.pop(call_id, None)
        if span is None:
            return
        if self._record_content:
            span.set_attribute(gen_ai.GEN_AI_TOOL_CALL_RESULT, redaction.current().text(result))
        span.end()
