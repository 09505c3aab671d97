"""Hypothesis strategies for agent events as the encoders see them: every object type the
trpc encoders treat on their own, choices with text, reasoning, tool calls and files,
partial or complete, errors, tags, state deltas and token usage. Shared by the property
tests that hold a fast path byte-equivalent to the path it stands in for."""

from __future__ import annotations

from hypothesis import strategies as st

from trpc_bridge.events import (
    AgentEvent,
    ChatMessage,
    Choice,
    ContentPart,
    FunctionCall,
    ObjectType,
    ResponseError,
    ToolCall,
    Usage,
)

_text = st.text(max_size=4)
_message = st.builds(
    ChatMessage,
    role=st.sampled_from(["", "assistant", "tool"]),
    content=_text,
    reasoning_content=_text,
    tool_calls=st.lists(
        st.builds(ToolCall, id=_text, function=st.builds(FunctionCall, name=_text)), max_size=1
    ),
    tool_id=st.sampled_from(["", "call_1"]),
    content_parts=st.lists(st.builds(ContentPart, type=st.just("file"), url=_text), max_size=1),
)
agent_events = st.builds(
    AgentEvent,
    id=st.sampled_from(["", "r1", "r2"]),
    object=st.sampled_from(
        [
            ObjectType.CHUNK,
            ObjectType.COMPLETION,
            ObjectType.TOOL_RESPONSE,
            ObjectType.CODE_EXECUTION,
            "graph.node.start",
            "preprocessing.basic",
            ObjectType.GRAPH_EXECUTION,
            ObjectType.ERROR,
            "",
        ]
    ),
    choices=st.lists(st.builds(Choice, message=_message, delta=_message), max_size=2),
    is_partial=st.booleans(),
    done=st.booleans(),
    error=st.none() | st.builds(ResponseError, message=_text),
    tag=st.sampled_from(["", "code_execution_code", "x;y"]),
    state_delta=st.dictionaries(
        st.sampled_from(["k", "last_response_id"]), st.none() | st.just(b"1")
    ),
    usage=st.none() | st.builds(Usage, prompt_tokens=st.integers(0, 10**6)),
)
