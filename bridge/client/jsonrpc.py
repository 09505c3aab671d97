"""A2A JSON-RPC over httpx, for both wire versions, with our own SSE reader.

Why not a2a-sdk's client here: it stops reading a stream at the first ``message`` frame
(trpc's message-mode streams send many), rejects ``"parts": null`` and cards with
``protocolVersion: 0.2.5``, and reads with a 5 s timeout by default. This reader keeps
every frame, leaves parsing to the liberal decoder, and has no read timeout unless one
is configured.

0.3 (trpc-agent-go's v0 servers, a2a-sdk's compat layer): slash methods, ``kind`` JSON,
no ``A2A-Version`` header. 1.0: PascalCase methods, ProtoJSON, ``A2A-Version: 1.0``.
Each result is read into a neutral frame here, once
(:func:`~trpc_bridge.codecs.a2a.frames.read_result`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Mapping
from typing import Any

import httpx
from a2a.types import Message
from google.protobuf.json_format import MessageToDict

from trpc_bridge.client.card import Endpoint
from trpc_bridge.client.errors import RemoteCallError, failure_text
from trpc_bridge.client.sse import read_data
from trpc_bridge.codecs.a2a.frames import Frame, read_result
from trpc_bridge.codecs.a2a.json03 import message_to_json
from trpc_bridge.codecs.errors import CodecError
from trpc_bridge.json_body import BodyError, parse_json
from trpc_bridge.names import new_uuid

log = logging.getLogger(__name__)

_METHODS = {
    "0.3": {
        "stream": "message/stream",
        "send": "message/send",
        "get": "tasks/get",
        "cancel": "tasks/cancel",
        "subscribe": "tasks/resubscribe",
    },
    "1.0": {
        "stream": "SendStreamingMessage",
        "send": "SendMessage",
        "get": "GetTask",
        "cancel": "CancelTask",
        "subscribe": "SubscribeToTask",
    },
}


def _message_json(message: Message, version: str) -> dict[str, Any]:
    if version == "0.3":
        # What a2a-sdk's 0.3 model of it dumps, without pydantic (a tenth of the cost).
        return message_to_json(message)
    as_dict: dict[str, Any] = MessageToDict(message)
    return as_dict


SKIPPED = object()


def stream_envelope(data: bytes, method: str) -> Any:
    """The result one SSE frame's ``data`` carries, as JSON; :data:`SKIPPED` for a frame
    that is not JSON (trpc's reader skips those too; JSON nested past the parser's depth
    is not JSON either). A JSON-RPC error frame raises :class:`RemoteCallError`: Go's
    client skips error frames, the bridge reports the failed stream. The data is UTF-8, a
    bad byte read as U+FFFD (as an SSE reader decodes the stream)."""
    try:
        envelope = parse_json(data)
    except BodyError:
        try:
            envelope = parse_json(data.decode("utf-8", "replace"))
        except BodyError:
            return SKIPPED
    # Parsed JSON: an object is a dict (``isinstance`` of an ABC costs ten times more).
    if type(envelope) is dict and "jsonrpc" not in envelope and "error" not in envelope:
        return envelope  # a bare result, without the JSON-RPC envelope
    return result_of(envelope, method)


def stream_frame(result: Any, method: str) -> Frame | None:
    """A streamed result read; None (with a warning) for one that is not an A2A result."""
    try:
        return read_result(result)
    except CodecError as exc:
        log.warning("skipping an unreadable %s result: %s", method, exc)
        return None


def stream_result(data: bytes, method: str) -> Frame | None:
    """The frame one SSE frame's ``data`` carries (:func:`stream_envelope`); None for a
    frame that is not JSON or not an A2A result."""
    result = stream_envelope(data, method)
    return None if result is SKIPPED else stream_frame(result, method)


def response_json(content: bytes, status: int, content_type: str, method: str) -> Any:
    """A whole JSON response body; :class:`RemoteCallError` when it is not JSON."""
    try:
        return parse_json(content)
    except BodyError:
        kind = content_type or "no type"
        raise RemoteCallError(f"{method}: HTTP {status} ({kind}), not JSON") from None


def _response_json(response: httpx.Response, method: str) -> Any:
    content_type = response.headers.get("content-type", "")
    return response_json(response.content, response.status_code, content_type, method)


def result_of(envelope: Any, method: str) -> Any:
    """The ``result`` of a JSON-RPC response (parsed JSON), or :class:`RemoteCallError`."""
    if type(envelope) is not dict:
        raise RemoteCallError(f"{method}: response is not a JSON-RPC object")
    error = envelope.get("error")
    if error is not None:
        err = error if isinstance(error, Mapping) else {"message": error}
        raise RemoteCallError(
            f"{method}: error {err.get('code', '')} {err.get('message', '')}".strip()
        )
    if "result" not in envelope:
        raise RemoteCallError(f"{method}: response has neither result nor error")
    return envelope["result"]


class JsonRpcTransport:
    def __init__(self, http: httpx.AsyncClient, endpoint: Endpoint) -> None:
        self._http = http
        self._endpoint = endpoint
        self._methods = _METHODS[endpoint.version]
        self._version_headers = {"A2A-Version": "1.0"} if endpoint.version == "1.0" else {}

    def _body(self, kind: str, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": new_uuid(),
            "method": self._methods[kind],
            "params": params,
        }

    def _headers(self, headers: Mapping[str, str], accept: str) -> dict[str, str]:
        return {**self._version_headers, **headers, "Accept": accept}

    async def _call(self, kind: str, params: dict[str, Any], headers: Mapping[str, str]) -> Any:
        """The JSON ``result`` of one JSON-RPC call."""
        method = self._methods[kind]
        try:
            response = await self._http.post(
                self._endpoint.url,
                json=self._body(kind, params),
                headers=self._headers(headers, "application/json"),
            )
        except httpx.HTTPError as exc:
            raise RemoteCallError(
                f"{method} to {self._endpoint.url} failed: {failure_text(exc)}"
            ) from exc
        return result_of(_response_json(response, method), method)

    async def send(
        self, message: Message, headers: Mapping[str, str], *, return_immediately: bool = False
    ) -> Frame:
        params: dict[str, Any] = {"message": _message_json(message, self._endpoint.version)}
        if return_immediately:
            params["configuration"] = (
                {"blocking": False}
                if self._endpoint.version == "0.3"
                else {"returnImmediately": True}
            )
        return read_result(await self._call("send", params, headers))

    async def get_task(self, task_id: str, headers: Mapping[str, str]) -> Frame:
        return read_result(await self._call("get", {"id": task_id}, headers))

    async def cancel_task(self, task_id: str, headers: Mapping[str, str]) -> None:
        await self._call("cancel", {"id": task_id}, headers)

    def stream(self, message: Message, headers: Mapping[str, str]) -> AsyncGenerator[Frame, None]:
        params = {"message": _message_json(message, self._endpoint.version)}
        return self._stream("stream", params, headers)

    def stream_call(
        self, message: Message, headers: Mapping[str, str]
    ) -> tuple[str, dict[str, Any], dict[str, str]]:
        """The method, body and headers :meth:`stream` sends (for another HTTP client)."""
        return self._call_of("stream", message, headers, "text/event-stream")

    def send_call(
        self, message: Message, headers: Mapping[str, str]
    ) -> tuple[str, dict[str, Any], dict[str, str]]:
        """The method, body and headers :meth:`send` sends (for another HTTP client)."""
        return self._call_of("send", message, headers, "application/json")

    def _call_of(
        self, kind: str, message: Message, headers: Mapping[str, str], accept: str
    ) -> tuple[str, dict[str, Any], dict[str, str]]:
        params = {"message": _message_json(message, self._endpoint.version)}
        return self._methods[kind], self._body(kind, params), self._headers(headers, accept)

    def subscribe(self, task_id: str, headers: Mapping[str, str]) -> AsyncGenerator[Frame, None]:
        return self._stream("subscribe", {"id": task_id}, headers)

    async def _stream(
        self, kind: str, params: dict[str, Any], headers: Mapping[str, str]
    ) -> AsyncGenerator[Frame, None]:
        method = self._methods[kind]
        body = self._body(kind, params)
        request = self._http.build_request(
            "POST",
            self._endpoint.url,
            json=body,
            headers=self._headers(headers, "text/event-stream"),
        )
        try:
            response = await self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise RemoteCallError(
                f"{method} to {self._endpoint.url} failed: {failure_text(exc)}"
            ) from exc
        try:
            content_type = response.headers.get("content-type", "")
            if not content_type.startswith("text/event-stream"):
                # An error before the stream started comes back as plain JSON.
                await response.aread()
                envelope = _response_json(response, method)
                # A server may answer with a single result.
                frame = stream_frame(result_of(envelope, method), method)
                if frame is not None:
                    yield frame
                return
            async for data in read_data(response.aiter_bytes()):
                frame = stream_result(data, method)
                if frame is not None:
                    yield frame
        except httpx.HTTPError as exc:
            raise RemoteCallError(
                f"{method} stream from {self._endpoint.url} broke: {failure_text(exc)}"
            ) from exc
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """The httpx client belongs to the caller."""
