"""trpc-a2a-bridge: Python agents and trpc-agent-go agents as one framework over A2A."""

from trpc_bridge.agent import Agent, FunctionAgent, Skill
from trpc_bridge.events import (
    AgentEvent,
    AgentRequest,
    ChatMessage,
    Choice,
    ContentPart,
    ErrorType,
    FunctionCall,
    ObjectType,
    ResponseError,
    Role,
    Tag,
    ToolCall,
)
from trpc_bridge.names import new_response_id
from trpc_bridge.telemetry.sdk_spans import configure_sdk_spans
from trpc_bridge.version import __version__

# a2a-sdk reads this switch once, when it is first imported: decide it before that
# happens. Its own spans stay off unless OTEL_INSTRUMENTATION_A2A_SDK_ENABLED says true.
configure_sdk_spans()

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentRequest",
    "ChatMessage",
    "Choice",
    "ContentPart",
    "ErrorType",
    "FunctionAgent",
    "FunctionCall",
    "ObjectType",
    "ResponseError",
    "Role",
    "Skill",
    "Tag",
    "ToolCall",
    "__version__",
    "new_response_id",
]
