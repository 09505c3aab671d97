"""REST (A2A 1.0 HTTP+JSON) requests checked before a2a-sdk sees them.

- The ``A2A-Version`` header: a2a-sdk reads a missing header as 0.3 and refuses it with
  "A2A version '0.3' is not supported", a version the caller never named. Here a REST
  route without ``A2A-Version: 1.x`` is told what to send (HTTP 400,
  ``VERSION_NOT_SUPPORTED``).
- A ``POST`` body is read as strict JSON (:mod:`~trpc_bridge.json_body`): bytes
  that are not UTF-8, malformed JSON, or JSON no A2A message can hold (too deep, a lone
  surrogate) get HTTP 400 ``INVALID_ARGUMENT`` with the reason, where a2a-sdk answers
  500 "unknown exception" and logs a traceback.
- The body and the query parameters are then checked against the route's request
  message (:mod:`~trpc_bridge.server.request_fields`): an enum value A2A does not have
  (``status=BOGUS``, ``"role": "user"``), a value of the wrong type (``pageSize=abc``) or,
  in a message sent, A2A 0.3's keys (``kind``, ``file``, ``blocking``), get HTTP 400 naming
  the field, where a2a-sdk would drop the value or quote Python's ``int()``.

Errors are AIP-193 bodies, as a2a-sdk writes its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from a2a.types import (
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from a2a.utils.error_handlers import build_rest_error_payload
from a2a.utils.errors import (
    A2AError,
    InvalidParamsError,
    InvalidRequestError,
    VersionNotSupportedError,
)
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from starlette.datastructures import QueryParams
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from trpc_bridge.json_body import BodyError, read_json
from trpc_bridge.names import A2A_VERSION_HEADER
from trpc_bridge.server.a2a.call_context import requested_major
from trpc_bridge.server.a2a.request_fields import field_problem
from trpc_bridge.server.http.limits import replaying

#: The 1.0 REST routes a2a-sdk mounts (optionally under a ``/{tenant}`` segment).
_REST_ROUTE = re.compile(
    r"^(?:/[^/]+)?/(?:message:(?:send|stream)|tasks(?:/.*)?|extendedAgentCard)$"
)
_HEADER_KEY = A2A_VERSION_HEADER.lower().encode()
_TENANT = r"^(?:/[^/]+)?"
#: (HTTP method, route) → the request message its body or query holds, and whether A2A
#: 0.3's keys are refused in it (a message sent: see request_fields).
_SCHEMAS: list[tuple[str, re.Pattern[str], Descriptor, bool]] = [
    (
        "POST",
        re.compile(_TENANT + r"/message:(?:send|stream)$"),
        SendMessageRequest.DESCRIPTOR,
        True,
    ),
    (
        "POST",
        re.compile(_TENANT + r"/tasks/[^/]+/pushNotificationConfigs$"),
        TaskPushNotificationConfig.DESCRIPTOR,
        False,
    ),
    ("GET", re.compile(_TENANT + r"/tasks$"), ListTasksRequest.DESCRIPTOR, False),
    ("GET", re.compile(_TENANT + r"/tasks/[^/:]+$"), GetTaskRequest.DESCRIPTOR, False),
    (
        "GET",
        re.compile(_TENANT + r"/tasks/[^/]+/pushNotificationConfigs$"),
        ListTaskPushNotificationConfigsRequest.DESCRIPTOR,
        False,
    ),
]


def _schema(method: str, route: str) -> tuple[Descriptor, bool] | None:
    for verb, pattern, descriptor, strict in _SCHEMAS:
        if verb == method and pattern.match(route):
            return descriptor, strict
    return None


def _query_document(query: QueryParams, descriptor: Descriptor) -> dict[str, object]:
    """The query parameters as the JSON a2a-sdk makes of them (its ``parse_params``):
    camelCase names, the last value of a repeated key, lists split at commas, booleans
    ``true`` / ``false`` in any case."""
    fields = {f.json_name: f for f in descriptor.fields}
    document: dict[str, object] = {}
    for key in query:
        field = fields.get(key)
        if field is None:
            continue
        values = query.getlist(key)
        if field.is_repeated:
            document[key] = [v for value in values for v in value.split(",") if v]
        elif field.type == FieldDescriptor.TYPE_BOOL and values[-1].lower() in ("true", "false"):
            document[key] = values[-1].lower() == "true"
        else:
            document[key] = values[-1]
    return document


def version_refusal(header: str | None) -> str:
    """Why a REST 1.0 call with this ``A2A-Version`` header is refused; empty: it is not."""
    major = requested_major(header)
    if major == "1":
        return ""
    if header is None or not header.strip():
        return (
            f"this is the A2A 1.0 HTTP+JSON binding: send the header '{A2A_VERSION_HEADER}: "
            "1.0' (a request without it is A2A 0.3, which has no REST binding here)"
        )
    shown = header.strip()[:40]
    return f"A2A version '{shown}' is not supported here: send '{A2A_VERSION_HEADER}: 1.0'"


class RestScreen:
    """ASGI middleware for the REST routes under ``base_path``; ``other_paths`` (JSON-RPC,
    AG-UI, cards) pass through."""

    def __init__(self, app: ASGIApp, *, base_path: str, other_paths: Iterable[str]) -> None:
        self.app = app
        self.base_path = base_path
        self.other_paths = frozenset(other_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        if (
            scope["type"] != "http"
            or path in self.other_paths
            or not path.startswith(self.base_path)
        ):
            await self.app(scope, receive, send)
            return
        route = path[len(self.base_path) :]
        if not _REST_ROUTE.match(route):
            await self.app(scope, receive, send)  # not a REST route: a2a-sdk's 404
            return
        header = next((v for k, v in scope["headers"] if k == _HEADER_KEY), None)
        refused = version_refusal(None if header is None else header.decode("latin-1"))
        if refused:
            await _refuse(send, VersionNotSupportedError(message=refused))
            return
        schema = _schema(scope["method"], route)
        if scope["method"] != "POST":
            if schema is not None:
                query = QueryParams(scope.get("query_string", b""))
                problem = field_problem(_query_document(query, schema[0]), schema[0])
                if problem:
                    await _refuse(send, InvalidParamsError(message=problem))
                    return
            await self.app(scope, receive, send)
            return
        body, more = await _read(receive)
        if more is not None:  # the client left while sending
            return
        if body:
            try:
                document = read_json(body)
            except BodyError as exc:
                error = InvalidRequestError if exc.syntax else InvalidParamsError
                await _refuse(send, error(message=str(exc)))
                return
            if schema is not None:
                descriptor, strict = schema
                problem = field_problem(document, descriptor, v03_keys=strict)
                if problem:
                    await _refuse(send, InvalidParamsError(message=problem))
                    return
        await self.app(scope, replaying(body, receive), send)


async def _read(receive: Receive) -> tuple[bytes, Message | None]:
    """The whole body, or the disconnect message that cut it short."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"", message
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), None


async def _refuse(send: Send, error: A2AError) -> None:
    payload = build_rest_error_payload(error)
    body = json.dumps(payload).encode()
    status: int = payload["error"]["code"]
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
