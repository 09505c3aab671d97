"""The agent behind ``trpc-bridge serve --agent tck``: the A2A TCK's scenarios.

The TCK asks for a behaviour in-band, by the prefix of the request's ``messageId``
(``scenarios/*.feature`` in the TCK; ``tck-complete-task``, ``tck-artifact-file``,
``tck-input-required``, …). Each scenario is written here with the bridge's own event
model, so the TCK checks the bridge's encoders and task handling, not a bypass:
task-status events (:meth:`AgentEvent.task_status`) for the task states, text events for
text artifacts, content parts for file and data artifacts. A message with no known
prefix completes its task with a message naming the id, as the TCK's reference agent does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.events import (
    AgentEvent,
    AgentRequest,
    ChatMessage,
    Choice,
    ContentPart,
    ObjectType,
    Role,
    TaskStateLiteral,
    TaskStateName,
)
from trpc_bridge.names import new_response_id

#: The TCK's streaming timeout is 2 s; its resubscribe scenario runs for twice that.
RESUBSCRIBE_RUN_S = 4.0

Scenario = Callable[[AgentRequest], AsyncIterator[AgentEvent]]


def _status(state: TaskStateLiteral, text: str = "") -> Callable[[], AgentEvent]:
    return lambda: AgentEvent.task_status(state, text)


def _text(text: str) -> Callable[[], AgentEvent]:
    return lambda: AgentEvent.final_text(text, new_response_id())


def _artifact(part: ContentPart) -> Callable[[], AgentEvent]:
    """One complete response whose content is ``part``: an artifact of the task."""
    message = ChatMessage(role=Role.ASSISTANT, content_parts=[part])
    return lambda: AgentEvent(
        id=new_response_id(), object=ObjectType.COMPLETION, choices=[Choice(message=message)]
    )


_WORKING = _status(TaskStateName.WORKING)
_COMPLETED = _status(TaskStateName.COMPLETED)


def _events(*events: Callable[[], AgentEvent]) -> Scenario:
    """A scenario that yields fresh ``events`` (new ids on every run)."""

    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        for event in events:
            yield event()

    return run


def _stream_text(text: str) -> Scenario:
    """working → one text artifact → completed (the TCK's streaming scenarios)."""
    return _events(_WORKING, _text(text), _COMPLETED)


async def _chunked(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    response_id = new_response_id()
    yield _WORKING()
    yield AgentEvent.text_delta("chunk-1 ", response_id)
    yield AgentEvent.text_delta("chunk-2", response_id)
    yield _COMPLETED()


async def _long_running(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    yield _WORKING()
    await asyncio.sleep(RESUBSCRIBE_RUN_S)
    yield _COMPLETED()


_FILE = ContentPart(type="file", data=b"tck", name="output.txt", mime_type="text/plain")
_FILE_URL = ContentPart(
    type="file", url="https://example.com/output.txt", name="output.txt", mime_type="text/plain"
)
_DATA = ContentPart(type="data", value={"key": "value", "count": 42})

#: messageId prefix → scenario; a prefix that extends another comes first.
SCENARIOS: tuple[tuple[str, Scenario], ...] = (
    ("tck-complete-task", _events(_status(TaskStateName.COMPLETED, "Hello from TCK"))),
    ("tck-artifact-text", _events(_text("Generated text content"), _COMPLETED)),
    ("tck-artifact-file-url", _events(_artifact(_FILE_URL), _COMPLETED)),
    ("tck-artifact-file", _events(_artifact(_FILE), _COMPLETED)),
    ("tck-artifact-data", _events(_artifact(_DATA), _COMPLETED)),
    ("tck-message-response", _events(_text("Direct message response"))),
    ("tck-input-required", _events(_status(TaskStateName.INPUT_REQUIRED, "Input required"))),
    ("tck-reject-task", _events(_status(TaskStateName.REJECTED, "rejected"))),
    ("tck-stream-001", _stream_text("Stream hello from TCK")),
    ("tck-stream-002", _events(_COMPLETED)),
    ("tck-stream-003", _stream_text("Stream task lifecycle")),
    ("tck-stream-ordering-001", _stream_text("Ordered output")),
    ("tck-stream-artifact-text", _stream_text("Streamed text content")),
    ("tck-stream-artifact-file", _events(_WORKING, _artifact(_FILE), _COMPLETED)),
    ("tck-stream-artifact-chunked", _chunked),
    ("test-resubscribe-message-id", _long_running),
)


async def run_tck(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    for prefix, scenario in SCENARIOS:
        if request.message_id.startswith(prefix):
            async for event in scenario(request):
                yield event
            return
    text = f"Unhandled messageId prefix: {request.message_id}"
    yield AgentEvent.task_status(TaskStateName.COMPLETED, text)


def tck_agent() -> FunctionAgent:
    return FunctionAgent(
        name="tck-agent",
        description="The A2A TCK's scenario agent: behaviour chosen by the messageId prefix.",
        fn=run_tck,
    )
