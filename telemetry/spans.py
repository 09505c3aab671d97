"""Span conventions shared by the client and the server side.

Names and attributes follow the OpenTelemetry GenAI agent conventions (``invoke_agent
{agent}``, ``gen_ai.*``), the same names trpc-agent-go writes, so a trace that crosses a
Go agent and a Python agent reads as one conversation. A2A has no standard attributes
yet; the ``a2a.*`` keys below are this bridge's own.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import traceback
from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.semconv._incubating.attributes import enduser_attributes as enduser
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv.attributes import error_attributes
from opentelemetry.util.types import AttributeValue

from trpc_bridge import redaction

#: Instrumentation scope of every span this package opens.
TRACER_NAME = "trpc_bridge"

OP_INVOKE_AGENT = gen_ai.GenAiOperationNameValues.INVOKE_AGENT.value
OP_EXECUTE_TOOL = gen_ai.GenAiOperationNameValues.EXECUTE_TOOL.value

A2A_TASK_ID = "a2a.task.id"
#: The A2A protocol binding: ``JSONRPC``, ``HTTP+JSON`` or ``GRPC`` (the card's spelling).
A2A_TRANSPORT = "a2a.transport"
#: ``0.3`` or ``1.0``: which A2A wire version the call used.
A2A_PROTOCOL_VERSION = "a2a.protocol.version"


#: Exceptions that end a call without it having failed: the consumer stopped reading or
#: went away (generator closed, task cancelled on disconnect).
NOT_FAILURES = (GeneratorExit, asyncio.CancelledError)

#: The standard switch for recording prompts, tool arguments and results in spans.
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


#: Tracer provider class → whether it records (neither the API's proxy nor its no-op).
_RECORDS: dict[type, bool] = {}


def tracing_enabled(provider: trace.TracerProvider | None = None) -> bool:
    """True when spans would be recorded: an SDK provider is installed (or given).

    This is the cheap check every hot path makes first, so that tracing off costs a
    lookup and nothing else (no header parsing, no context objects). By class, cached:
    ``isinstance`` against the API's abstract provider classes goes through
    ``ABCMeta.__instancecheck__`` on every call.
    """
    current = provider if provider is not None else trace.get_tracer_provider()
    kind = type(current)
    records = _RECORDS.get(kind)
    if records is None:
        off = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
        records = _RECORDS[kind] = not issubclass(kind, off)
    return records


@functools.lru_cache(maxsize=16)
def get_tracer(provider: trace.TracerProvider | None = None) -> trace.Tracer:
    """The bridge's tracer; with no provider, the global one (resolved lazily by the API).

    Cached: the SDK builds a new tracer on every call (tens of µs), and hooks ask per
    request. A tracer from the not-yet-set global provider is a proxy that follows the
    provider once one is set, so caching it is safe.
    """
    return trace.get_tracer(TRACER_NAME, tracer_provider=provider)


def content_recording(option: bool | None) -> bool:
    """Whether user ids and message contents go into spans: the option, else the env var."""
    if option is not None:
        return option
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() == "true"


def invoke_agent_span_name(agent_name: str) -> str:
    return f"{OP_INVOKE_AGENT} {agent_name}" if agent_name else OP_INVOKE_AGENT


@dataclass(frozen=True)
class AgentCall:
    """One ``invoke_agent`` call as either side describes it: the caller (CLIENT span) and
    the server (SERVER span) record the same attributes."""

    transport: str = ""
    protocol_version: str = ""
    conversation_id: str = ""
    task_id: str = ""
    user_id: str = ""
    input_text: str = ""


def invoke_agent_attributes(
    agent_name: str, call: AgentCall, *, record_content: bool = False
) -> dict[str, AttributeValue]:
    """Attributes of an ``invoke_agent`` span; empty values are left out.

    ``user_id`` and ``input_text`` are personal data: recorded only with ``record_content``.
    """
    # Plain ifs, not a filtered dict: this runs for every served call.
    attributes: dict[str, AttributeValue] = {gen_ai.GEN_AI_OPERATION_NAME: OP_INVOKE_AGENT}
    if agent_name:
        attributes[gen_ai.GEN_AI_AGENT_NAME] = agent_name
    if call.conversation_id:
        attributes[gen_ai.GEN_AI_CONVERSATION_ID] = call.conversation_id
    if call.task_id:
        attributes[A2A_TASK_ID] = call.task_id
    if call.transport:
        attributes[A2A_TRANSPORT] = call.transport
    if call.protocol_version:
        attributes[A2A_PROTOCOL_VERSION] = call.protocol_version
    if record_content:
        if call.user_id:
            attributes[enduser.ENDUSER_ID] = call.user_id
        if call.input_text:
            # The caller's own text, with what the redaction policy masks (a pasted key).
            text = redaction.current().text(call.input_text)
            attributes[gen_ai.GEN_AI_INPUT_MESSAGES] = input_messages_json(text)
    return attributes


def input_messages_json(text: str) -> str:
    """The user's text in the GenAI ``gen_ai.input.messages`` JSON shape."""
    message = {"role": "user", "parts": [{"type": "text", "content": text}]}
    return json.dumps([message], ensure_ascii=False)


def record_failure(span: trace.Span, exc: BaseException) -> None:
    """Mark ``span`` failed by ``exc`` (``error.type`` = the exception's class name); its
    message and stack trace pass the redaction policy first."""
    policy = redaction.current()
    message = policy.text(str(exc))
    stacktrace = policy.text("".join(traceback.format_exception(exc)))
    span.record_exception(
        exc, attributes={"exception.message": message, "exception.stacktrace": stacktrace}
    )
    span.set_attribute(error_attributes.ERROR_TYPE, type(exc).__qualname__)
    span.set_status(trace.StatusCode.ERROR, message)


def annotate_current_span(*, task_id: str = "", conversation_id: str = "") -> None:
    """Add ids known only once the server assigned them (the task id; the context id when
    the caller sent none) to the current ``invoke_agent`` span — the SERVER span on the
    serving side, the CLIENT span inside a remote agent's run. A no-op when nothing is
    recording."""
    span = trace.get_current_span()
    if not span.is_recording():
        return
    if task_id:
        span.set_attribute(A2A_TASK_ID, task_id)
    if conversation_id:
        span.set_attribute(gen_ai.GEN_AI_CONVERSATION_ID, conversation_id)
