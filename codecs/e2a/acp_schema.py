"""What this bridge takes from the ``agent-client-protocol`` package's schema.

The schema is generated from ACP's JSON schema and moves fast (0.7 → 0.12 in eight
months), so the names are read off its models instead of being copied here: the request
model of each client → agent method, and the ``sessionUpdate`` kinds the installed
version knows. Kinds it does not know (a newer agent's) are tolerated by every reader in
this package: kept as JSON, never validated against a model that would reject them.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from acp import schema
from pydantic import BaseModel, ValidationError

from trpc_bridge.codecs.e2a.errors import format_error

#: Client → agent methods whose params this bridge validates (the rest pass as JSON).
REQUEST_MODELS: dict[str, type[BaseModel]] = {
    "initialize": schema.InitializeRequest,
    "authenticate": schema.AuthenticateRequest,
    "session/new": schema.NewSessionRequest,
    "session/load": schema.LoadSessionRequest,
    "session/prompt": schema.PromptRequest,
    "session/cancel": schema.CancelNotification,
    "session/set_mode": schema.SetSessionModeRequest,
    "session/close": schema.CloseSessionRequest,
}

SessionUpdate = (
    schema.UserMessageChunk
    | schema.AgentMessageChunk
    | schema.AgentThoughtChunk
    | schema.ToolCallStart
    | schema.ToolCallProgress
    | schema.AgentPlanUpdate
    | schema.AgentPlanContentUpdate
    | schema.AgentPlanRemovedUpdate
    | schema.AvailableCommandsUpdate
    | schema.CurrentModeUpdate
    | schema.ConfigOptionUpdate
    | schema.SessionInfoUpdate
    | schema.UsageUpdate
)


def _update_models() -> dict[str, type[BaseModel]]:
    union = schema.SessionNotification.model_fields["update"].annotation
    models: dict[str, type[BaseModel]] = {}
    for member in typing.get_args(union):
        for kind in typing.get_args(member.model_fields["session_update"].annotation):
            models[kind] = member
    return models


#: ``sessionUpdate`` kind → model, for the kinds the installed schema knows.
UPDATE_MODELS = _update_models()


def validated(model: type[BaseModel], params: Mapping[str, Any], what: str) -> BaseModel:
    """``params`` as ``model``, or :class:`E2AFormatError` naming the bad fields."""
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise format_error(what, exc) from None


def to_json(model: BaseModel) -> dict[str, Any]:
    """ACP wire JSON: camelCase aliases, unset optional fields left out."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def update_model(update: Mapping[str, Any]) -> SessionUpdate | None:
    """A ``session/update`` update as its typed model; ``None`` for a kind this schema
    does not know. A known kind with bad fields is an error."""
    model = UPDATE_MODELS.get(str(update.get("sessionUpdate")))
    if model is None:
        return None
    return typing.cast(SessionUpdate, validated(model, update, "ACP session update"))
