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
    new_response_id,
)

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
    "new_response_id",
]
