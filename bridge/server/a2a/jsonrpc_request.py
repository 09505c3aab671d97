"""A JSON-RPC request body → a parsed A2A call, or the precise JSON-RPC error for it.

The one place where the bridge decides what a client's JSON-RPC mistake is called, for
A2A 0.3 and 1.0 alike (JSON-RPC 2.0 §4–5.1, A2A 1.0 §9): every route that reads a
JSON-RPC body calls :func:`parse_jsonrpc` and answers a :class:`JsonRpcFault` as it is,
so a2a-sdk (which answers some of these with ``-32603`` and Python's exception text, and
logs a traceback) only ever sees well-formed calls.

=====================================================  ==========================================
the body                                               answer
=====================================================  ==========================================
not UTF-8, not JSON, NaN, nested too deep to parse     ``-32700`` Parse error, ``id`` null
not an object, a batch, ``jsonrpc`` ≠ "2.0", bad       ``-32600`` Invalid Request (``id`` null
``id`` / ``method`` / ``params`` type, a member        unless the ``id`` itself was valid)
other than those four
no ``id`` (a notification), otherwise valid            no answer at all (HTTP 204): every A2A
                                                       method needs its result, none is run
unknown method                                         ``-32601`` Method not found
a 1.0 method without ``A2A-Version: 1.x``, a 0.3       ``-32009`` VersionNotSupported, saying
method with it, an unknown version                     which header to send
``params`` missing, an array, not the method's         ``-32602`` Invalid params, naming the
shape, deeper than protobuf allows, a lone surrogate,  field (``params.message.messageId``)
an enum value the method does not know, A2A 0.3's
keys in a 1.0 message sent (``request_fields``)
=====================================================  ==========================================

A successful parse is a :class:`JsonRpcCall` holding the method's a2a-sdk 1.0 request
(the 0.3 form converted), so a route may serve it without parsing again.
"""

from __future__ import annotations

import binascii
import contextlib
import json
from dataclasses import dataclass
from typing import Any

# a2a.server.routes first: a2a-sdk 1.3's 0.3 adapter cannot be imported on its own.
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher  # isort: skip
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3.jsonrpc_adapter import JSONRPC03Adapter
from google.protobuf.json_format import ParseDict, ParseError
from google.protobuf.message import Message as ProtoMessage
from pydantic import BaseModel, ValidationError

from trpc_bridge.codecs.a2a.json03_read import NotPlain, send_params
from trpc_bridge.codecs.encoding import WireVersion
from trpc_bridge.json_body import (
    BodyError,
    check_json,
    checked_by_parsing,
    dotted_path,
    parse_json,
)
from trpc_bridge.names import A2A_VERSION_HEADER
from trpc_bridge.server.a2a.call_context import requested_major
from trpc_bridge.server.a2a.request_fields import field_problem

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
VERSION_NOT_SUPPORTED = -32009

_V03_MODELS: dict[str, type[BaseModel]] = JSONRPC03Adapter.METHOD_TO_MODEL  # type: ignore[assignment]
_V10_MODELS: dict[str, type[ProtoMessage]] = JsonRpcDispatcher.METHOD_TO_MODEL
#: 0.3 request model → the 1.0 request a2a-sdk's 0.3 adapter hands the handler.
_PUSH = "tasks/pushNotificationConfig/"
#: The 0.3 message calls (:func:`~trpc_bridge.codecs.a2a.json03_read.send_params`).
_MESSAGE_METHODS = frozenset({"message/send", "message/stream"})
_V03_TO_CORE: dict[str, Any] = {
    "message/send": conversions.to_core_send_message_request,
    "message/stream": conversions.to_core_send_message_request,
    "tasks/get": conversions.to_core_get_task_request,
    "tasks/cancel": conversions.to_core_cancel_task_request,
    "tasks/resubscribe": conversions.to_core_subscribe_to_task_request,
    _PUSH + "set": conversions.to_core_create_task_push_notification_config_request,
    _PUSH + "get": conversions.to_core_get_task_push_notification_config_request,
    _PUSH + "list": conversions.to_core_list_task_push_notification_config_request,
    _PUSH + "delete": conversions.to_core_delete_task_push_notification_config_request,
    "agent/getAuthenticatedExtendedCard": conversions.to_core_get_extended_agent_card_request,
}
#: 1.0 methods whose params may be left out (everything in them is optional).
_PARAMS_OPTIONAL = frozenset({"ListTasks", "GetExtendedAgentCard"})
#: 1.0 methods whose params may not hold A2A 0.3's keys: a message sent (``request_fields``).
STRICT_METHODS = frozenset({"SendMessage", "SendStreamingMessage"})
_ENVELOPE = frozenset({"jsonrpc", "id", "method", "params"})
_SHOWN = 120  # characters of a client's value quoted back in a message

RequestId = str | int | None


@dataclass(frozen=True)
class JsonRpcCall:
    """A well-formed call of a known A2A method with valid params."""

    id: RequestId
    method: str
    wire: WireVersion
    #: The whole request object as parsed (what a2a-sdk's dispatcher reads).
    body: dict[str, Any]
    #: The a2a-sdk 1.0 request message for ``method`` (0.3 params converted).
    request: ProtoMessage


@dataclass(frozen=True)
class JsonRpcNotification:
    """A request without ``id``: JSON-RPC forbids any answer. A2A has no method that
    makes sense unanswered, so it is not run either."""

    method: str


@dataclass(frozen=True)
class JsonRpcFault:
    """The error answer for a request that cannot be called."""

    code: int
    message: str
    id: RequestId = None

    def response(self) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        }

    def body(self) -> bytes:
        return json.dumps(self.response(), ensure_ascii=False).encode()


Parsed = JsonRpcCall | JsonRpcNotification | JsonRpcFault


def shown(value: object) -> str:
    """A client's value quoted in a message: ``repr`` (control characters escaped),
    shortened."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def parse_jsonrpc(body: bytes, a2a_version: str | None) -> Parsed:
    """``body`` (the raw HTTP body) with the request's ``A2A-Version`` header value."""
    try:
        document = parse_json(body)
    except BodyError as exc:
        return JsonRpcFault(PARSE_ERROR, f"Parse error: {exc}")
    if isinstance(document, list):
        return JsonRpcFault(INVALID_REQUEST, "Invalid Request: batch requests are not supported")
    if not isinstance(document, dict):
        return JsonRpcFault(INVALID_REQUEST, "Invalid Request: the body must be a JSON object")
    envelope = _envelope(document)
    if isinstance(envelope, JsonRpcFault):
        return envelope
    request_id, method = envelope
    if "id" not in document:
        return JsonRpcNotification(method)
    return _call(document, request_id, method, a2a_version, checked=checked_by_parsing(body))


def _envelope(document: dict[str, Any]) -> tuple[RequestId, str] | JsonRpcFault:
    request_id = document.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | None):
        return JsonRpcFault(
            INVALID_REQUEST, "Invalid Request: 'id' must be a string, an integer or null"
        )
    try:
        check_json(request_id)
    except BodyError:
        return JsonRpcFault(INVALID_REQUEST, "Invalid Request: 'id' is not Unicode text")
    if document.get("jsonrpc") != "2.0":
        return JsonRpcFault(
            INVALID_REQUEST, "Invalid Request: 'jsonrpc' must be exactly \"2.0\"", request_id
        )
    method = document.get("method")
    if not isinstance(method, str) or not method:
        return JsonRpcFault(
            INVALID_REQUEST, "Invalid Request: 'method' must be a non-empty string", request_id
        )
    unknown = [] if _ENVELOPE.issuperset(document) else sorted(set(document) - _ENVELOPE)
    if unknown:  # a2a-sdk's dispatcher refuses them too, for every method
        return JsonRpcFault(
            INVALID_REQUEST,
            f"Invalid Request: unknown member {shown(unknown[0])} (a request has only "
            "jsonrpc, id, method and params)",
            request_id,
        )
    params = document.get("params", {})
    if not isinstance(params, dict | list):
        return JsonRpcFault(
            INVALID_REQUEST, "Invalid Request: 'params' must be an object", request_id
        )
    return request_id, method


def _version_fault(method: str, wire: WireVersion, header: str | None) -> str:
    """Why ``method`` cannot be called with this ``A2A-Version`` header; empty: it can.
    As a2a-sdk decides: no header means 0.3, a version is accepted by its major number."""
    version = (header or "").strip()
    major = requested_major(header)
    if major not in ("0", "1"):
        return (
            f"A2A version {shown(version)} is not supported: send "
            f"'{A2A_VERSION_HEADER}: 1.0' for A2A 1.0, or no {A2A_VERSION_HEADER} header for 0.3"
        )
    if wire is WireVersion.V1_0 and major != "1":
        return f"{method} is an A2A 1.0 method: send the header '{A2A_VERSION_HEADER}: 1.0'"
    if wire is WireVersion.V0_3 and major != "0":
        return (
            f"{method} is an A2A 0.3 method but {A2A_VERSION_HEADER} is {shown(version)}: "
            f"use the 1.0 method name, or send no {A2A_VERSION_HEADER} header"
        )
    return ""


def _call(
    document: dict[str, Any],
    request_id: RequestId,
    method: str,
    a2a_version: str | None,
    *,
    checked: bool,
) -> JsonRpcCall | JsonRpcFault:
    """``checked``: the parse already ruled out what :func:`check_json` refuses."""
    if method in _V03_MODELS:
        wire = WireVersion.V0_3
    elif method in _V10_MODELS:
        wire = WireVersion.V1_0
    else:
        return JsonRpcFault(METHOD_NOT_FOUND, f"Method not found: {shown(method)}", request_id)
    refused = _version_fault(method, wire, a2a_version)
    if refused:
        return JsonRpcFault(VERSION_NOT_SUPPORTED, refused, request_id)
    params = document.get("params")
    if isinstance(params, list):
        return JsonRpcFault(
            INVALID_PARAMS,
            "Invalid params: 'params' must be an object of named parameters, not an array",
            request_id,
        )
    if params is None and method not in _PARAMS_OPTIONAL and method in _V10_MODELS:
        return JsonRpcFault(INVALID_PARAMS, f"Invalid params: {method} needs params", request_id)
    try:
        if not checked:
            check_json(params)
    except BodyError as exc:
        where = f"params.{exc.path}: " if exc.path else "params: "
        reason = str(exc).removeprefix(f"{exc.path}: ")
        return JsonRpcFault(INVALID_PARAMS, f"Invalid params: {where}{reason}", request_id)
    if wire is WireVersion.V1_0:
        model = _V10_MODELS[method]
        strict = method in STRICT_METHODS
        problem = field_problem(params or {}, model.DESCRIPTOR, path="params", v03_keys=strict)
        if problem:
            return JsonRpcFault(INVALID_PARAMS, f"Invalid params: {problem}", request_id)
    try:
        request = _v03_request(document, method) if wire is WireVersion.V0_3 else None
        if request is None:
            request = ParseDict(params or {}, _V10_MODELS[method](), ignore_unknown_fields=True)
    except _InvalidParams as exc:
        return JsonRpcFault(INVALID_PARAMS, f"Invalid params: {exc}", request_id)
    except ParseError as exc:
        return JsonRpcFault(INVALID_PARAMS, f"Invalid params: {_shorter(str(exc))}", request_id)
    return JsonRpcCall(request_id, method, wire, document, request)


class _InvalidParams(ValueError):
    pass


def _v03_request(document: dict[str, Any], method: str) -> ProtoMessage:
    """The 0.3 request validated by a2a-sdk's own 0.3 model and converted to 1.0, as its
    adapter will; failures as :class:`_InvalidParams`. A message call in the plain shape
    is read straight from the JSON instead (:mod:`~trpc_bridge.codecs.a2a.json03_read`:
    the same request)."""
    if method in _MESSAGE_METHODS:
        with contextlib.suppress(NotPlain):
            return send_params(document.get("params"))
    try:
        model = _V03_MODELS[method].model_validate(document)
    except ValidationError as exc:
        raise _InvalidParams(_validation_message(exc, method)) from None
    try:
        converted: ProtoMessage = _V03_TO_CORE[method](model)
    except binascii.Error:
        raise _InvalidParams("a file part's bytes are not valid base64") from None
    except (ValueError, TypeError, OverflowError):
        raise _InvalidParams("a value is out of range for A2A") from None
    return converted


def _validation_message(exc: ValidationError, method: str) -> str:
    """The first problem pydantic found, as ``path: what``; a value that matches no
    branch of a union (a part of unknown kind) is said so once, not per branch."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    first = errors[0]
    path: list[str | int] = []
    branches: list[str] = []
    for step in first["loc"]:
        if isinstance(step, str) and step[:1].isupper():  # a union branch (model name)
            branches.append(step)
            break
        path.append(step)
    where = dotted_path(path)
    if where == "params" and first["type"] == "missing":
        return f"{method} needs params"
    if branches:
        names = sorted({str(e["loc"][len(path)]) for e in errors if len(e["loc"]) > len(path)})
        return f"{where}: matches none of {', '.join(names)}"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def _shorter(text: str) -> str:
    """protobuf's parse message, without its doubled final period, shortened."""
    text = text.rstrip(".")
    return text if len(text) <= 300 else text[:299] + "…"
