"""An A2A 0.3 ``message/send`` / ``message/stream`` request read straight into the 1.0
``SendMessageRequest`` the handler takes, for the shape clients send.

a2a-sdk's 0.3 adapter validates the whole JSON-RPC request with its pydantic 0.3 models
and converts those to the 1.0 protobuf (``conversions.to_core_send_message_request``): a
tenth of a unary call's cost, most of it for a message of a few text parts.
:func:`direct_send_request` builds the same protobuf from the parsed JSON when every
member is one it knows, of the exact JSON type the 0.3 model takes without coercion —
text parts only, the configuration without a push config, camelCase names — and
declines (``None``) for anything else: another part kind, a snake_case name (pydantic
takes both spellings), an unknown member (pydantic ignores it), a value pydantic would
coerce or refuse, a number protobuf cannot hold. A declined request takes the SDK's path,
so every error a client sees is still that path's. ``tests/server/test_send03.py`` checks
the two agree on generated requests, valid and not.
"""

from __future__ import annotations

from typing import Any

from a2a.types import Role, SendMessageConfiguration, SendMessageRequest

from trpc_bridge.codecs.a2a.proto_struct import fill_struct

_PARAMS = frozenset({"message", "configuration", "metadata"})
_MESSAGE = frozenset(
    {
        "kind",
        "messageId",
        "role",
        "parts",
        "contextId",
        "taskId",
        "metadata",
        "extensions",
        "referenceTaskIds",
    }
)
_TEXT_PART = frozenset({"kind", "text", "metadata"})
_CONFIGURATION = frozenset({"acceptedOutputModes", "blocking", "historyLength"})
_ROLES = {"user": Role.ROLE_USER, "agent": Role.ROLE_AGENT}
_INT32 = (-(2**31), 2**31 - 1)


def direct_send_request(document: dict[str, Any]) -> SendMessageRequest | None:
    """The 1.0 request a2a-sdk makes of the 0.3 JSON-RPC ``document`` (a ``message/send``
    or ``message/stream`` call), or ``None`` when its shape is not one read here."""
    if type(document.get("id")) not in (str, int):
        return None
    params = document.get("params")
    if type(params) is not dict or not _PARAMS.issuperset(params):
        return None
    message = params.get("message")
    configuration = params.get("configuration")
    metadata = params.get("metadata")
    if type(message) is not dict or not _MESSAGE.issuperset(message):
        return None
    if not (configuration is None or _plain_configuration(configuration)):
        return None
    if not _object_or_none(metadata):
        return None
    request = SendMessageRequest()
    try:
        if not _fill_message(request, message):
            return None
        if configuration is not None:  # an empty one too: the SDK copies it in
            config = SendMessageConfiguration()
            _fill_configuration(config, configuration)
            request.configuration.CopyFrom(config)
        if metadata:
            _fill_struct(request.metadata, metadata)
    except (ValueError, TypeError, OverflowError):  # what protobuf cannot hold: the SDK says
        return None
    return request


def _object_or_none(value: Any) -> bool:
    return value is None or type(value) is dict


def _strings_or_none(value: Any) -> bool:
    return value is None or (type(value) is list and all(type(v) is str for v in value))


def _string_or_none(value: Any) -> bool:
    return value is None or type(value) is str


def _plain_configuration(configuration: Any) -> bool:
    if type(configuration) is not dict or not _CONFIGURATION.issuperset(configuration):
        return False
    blocking = configuration.get("blocking")
    history = configuration.get("historyLength")
    return (
        _strings_or_none(configuration.get("acceptedOutputModes"))
        and (blocking is None or type(blocking) is bool)
        and (history is None or (type(history) is int and _INT32[0] <= history <= _INT32[1]))
    )


def _fill_configuration(config: SendMessageConfiguration, configuration: dict[str, Any]) -> None:
    """``conversions.to_core_send_message_configuration``."""
    modes = configuration.get("acceptedOutputModes")
    if modes:
        config.accepted_output_modes.extend(modes)
    history = configuration.get("historyLength")
    if history:  # 0.3's 0 is "unlimited": left unset
        config.history_length = history
    blocking = configuration.get("blocking")
    if blocking is not None:
        config.return_immediately = not blocking


def _fill_struct(struct: Any, values: dict[str, Any]) -> None:
    """``ParseDict(values, struct)``: marked set even when ``values`` is empty."""
    struct.Clear()
    fill_struct(struct, values)


def _fill_message(request: SendMessageRequest, message: dict[str, Any]) -> bool:
    """``conversions.to_core_message`` into ``request.message``; False: not read here."""
    kind = message.get("kind", "message")
    message_id = message.get("messageId")
    role_name = message.get("role")
    role = _ROLES.get(role_name) if type(role_name) is str else None
    parts = message.get("parts")
    context_id = message.get("contextId")
    task_id = message.get("taskId")
    metadata = message.get("metadata")
    extensions = message.get("extensions")
    references = message.get("referenceTaskIds")
    if (
        kind != "message"
        or type(kind) is not str
        or type(message_id) is not str
        or role is None
        or type(parts) is not list
        or not _string_or_none(context_id)
        or not _string_or_none(task_id)
        or not _object_or_none(metadata)
        or not _strings_or_none(extensions)
        or not _strings_or_none(references)
    ):
        return False
    core = request.message
    core.message_id = message_id
    if context_id:
        core.context_id = context_id
    if task_id:
        core.task_id = task_id
    if references:
        core.reference_task_ids.extend(references)
    core.role = role
    if metadata:
        _fill_struct(core.metadata, metadata)
    if extensions:
        core.extensions.extend(extensions)
    for part in parts:
        if type(part) is not dict or not _TEXT_PART.issuperset(part):
            return False
        text = part.get("text")
        part_metadata = part.get("metadata")
        if (
            part.get("kind", "text") != "text"
            or type(text) is not str
            or not _object_or_none(part_metadata)
        ):
            return False
        core_part = core.parts.add(text=text)
        if part_metadata is not None:
            _fill_struct(core_part.metadata, part_metadata)
    return True
