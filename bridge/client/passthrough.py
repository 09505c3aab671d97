"""The upstream half of the proxy's pass-through: a streamed run whose results a server
may take before they are decoded (the server half is ``server/proxying``).

A server that writes the same wire and encoding as the upstream (``trpc-bridge proxy``
in front of a trpc-agent-go server, both speaking A2A 0.3 JSON-RPC in trpc's dialect)
does not need every result turned into events and back into frames: it hands
:meth:`~trpc_bridge.client.RemoteAgent.run` a :class:`Passthrough`, which sees each
result first, as parsed JSON. What it :meth:`~Passthrough.take`-s it has already
published; everything else is decoded as usual, after the decoder has absorbed results
*standing for* the taken ones (:meth:`~Passthrough.standing`), so that its state (the
text streamed per response id, the task it follows) is what it would have been.
Cancellation, recovery with ``tasks/get``, the progress tap and tracing stay the
RemoteAgent's.

:class:`RawResults` reads the stream with :mod:`~trpc_bridge.client.lean_http`, in
the batches it arrives in, and parses each result once, with
:func:`~trpc_bridge.json_body.parse_json`: the same values the httpx reader produces
(RemoteAgent reads every JSON-RPC stream so).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from a2a.types import Message

from trpc_bridge.client.errors import RemoteCallError
from trpc_bridge.client.jsonrpc import (
    SKIPPED,
    JsonRpcTransport,
    response_json,
    result_of,
    stream_envelope,
    stream_frame,
)
from trpc_bridge.client.lean_http import LeanHttp, LeanHttpError, LeanResponse, Sent
from trpc_bridge.client.sse import SseParser
from trpc_bridge.codecs.a2a.frames import Frame
from trpc_bridge.codecs.a2a.json03 import json_bytes


@dataclass(frozen=True)
class Ahead:
    """A run's request sent before the run reached its agent
    (:meth:`~trpc_bridge.client.RemoteAgent.send_ahead`): what it was sent with, and the
    request on its way. The run reads its answer instead of sending the request again."""

    method: str
    message: Message
    headers: Mapping[str, str]
    sent: Sent


class Passthrough(Protocol):
    """What a server offers a streamed run (see the module doc)."""

    def ahead(self) -> Ahead | None:
        """The run's request when the server sent it ahead of the run (handed over
        once; None: the run sends it)."""
        ...

    def take(self, result: Any) -> bool:
        """``result`` (parsed JSON) is handled: the decoder does not see it."""
        ...

    def take_bare(self, object_type: str) -> bool:
        """A bare update of ``object_type`` is handled: one the decoder named
        (:meth:`~trpc_bridge.codecs.trpc.decode.StreamDecoder.bare_type`), whose decoding
        would only have been its event; the decoder absorbs it instead."""
        ...

    def standing(self) -> list[Any]:
        """Results standing for those taken since the last call, in order: fed to the
        decoder for its state only (their events are dropped)."""
        ...

    async def pace(self) -> None:
        """Returns when more may be taken (a door whose writer is behind holds the
        stream back, as it would by not asking for more events)."""
        ...


class AnswerPassthrough(Protocol):
    """What a server offers a unary run: the upstream's answer (its ``result``, parsed
    JSON) is seen first, and one it takes is not decoded (see the module doc)."""

    def ahead(self) -> Ahead | None:
        """As :meth:`Passthrough.ahead`."""
        ...

    def take_answer(self, result: Any) -> bool: ...


class RawResults:
    """The results of a JSON-RPC ``message/stream`` (``SendStreamingMessage`` on 1.0),
    read with the lean client: what :class:`RemoteAgent` reads its streams with when no
    HTTP proxy is on the way."""

    def __init__(self, transport: JsonRpcTransport, url: str, http: LeanHttp) -> None:
        self._transport = transport
        self._url = url
        parts = urlsplit(url)
        self._path = parts.path + (f"?{parts.query}" if parts.query else "")
        self._http = http
        self._method = "message/stream"

    async def stream(
        self, message: Message, headers: Mapping[str, str]
    ) -> AsyncGenerator[Frame, None]:
        """As :meth:`JsonRpcTransport.stream`: every result read, in order, an unreadable
        one skipped; a broken stream or a JSON-RPC error raises :class:`RemoteCallError`."""
        async for batch in self.batches(message, headers):
            for result in batch:
                frame = self.frame(result)
                if frame is not None:
                    yield frame

    def frame(self, result: Any) -> Frame | None:
        """One result of :meth:`batches` read (None, with a warning, when it is not an A2A
        result)."""
        return stream_frame(result, self._method)

    def send_ahead(
        self, message: Message, headers: Mapping[str, str], *, stream: bool
    ) -> Ahead | None:
        """The request of :meth:`batches` (``stream``) or :meth:`answer` written now, on a
        kept-alive connection, for that call to read; None (nothing sent) without one or
        with a header that cannot be sent (the call then fails as it does)."""
        method, body, sent_headers = self._call(message, headers, stream=stream)
        try:
            sent = self._http.send_pooled(self._path, json_bytes(body), sent_headers)
        except LeanHttpError:
            return None
        return None if sent is None else Ahead(method, message, headers, sent)

    def _call(
        self, message: Message, headers: Mapping[str, str], *, stream: bool
    ) -> tuple[str, dict[str, Any], dict[str, str]]:
        if stream:
            return self._transport.stream_call(message, headers)
        return self._transport.send_call(message, headers)

    async def _open(
        self, message: Message, headers: Mapping[str, str], ahead: Ahead | None, *, stream: bool
    ) -> tuple[str, LeanResponse]:
        """The method and the response (its head read) of the request, sent now unless
        ``ahead`` was; :class:`RemoteCallError` when it fails."""
        if ahead is not None:
            method = ahead.method
        else:
            method, body, sent = self._call(message, headers, stream=stream)
        if stream:
            self._method = method
        try:
            if ahead is not None:
                return method, await self._http.response_to(ahead.sent)
            return method, await self._http.post(self._path, json_bytes(body), sent)
        except LeanHttpError as exc:
            raise RemoteCallError(f"{method} to {self._url} failed: {exc}") from None

    async def batches(
        self, message: Message, headers: Mapping[str, str], ahead: Ahead | None = None
    ) -> AsyncGenerator[list[Any], None]:
        """Every result as JSON, in order, in the batches they arrived in (for a
        passthrough, which sees them first). Between two batches the event loop runs
        others (not after the batch that completes the answer): relayed results are
        handed on without any other await in between. ``ahead``: the request was sent
        already (:meth:`send_ahead`)."""
        method, response = await self._open(message, headers, ahead, stream=True)
        try:
            content_type = response.headers.get("content-type", "")
            if not content_type.startswith("text/event-stream"):
                # An error before the stream started comes back as plain JSON.
                content = await response.read()
                envelope = response_json(content, response.status, content_type, method)
                yield [result_of(envelope, method)]
                return
            parser = SseParser()
            async for chunk in response.chunks():
                if batch := self._results(parser.feed(chunk), method):
                    yield batch
                    # With more to come, the loop hands this batch on first. At the end
                    # it does not: the run ends in this turn, and its last frames leave
                    # in the same write as this batch's.
                    if not response.ended:
                        await asyncio.sleep(0)
            if batch := self._results(parser.end(), method):
                yield batch
        except LeanHttpError as exc:
            raise RemoteCallError(f"{method} stream from {self._url} broke: {exc}") from None
        finally:
            response.release()

    async def answer(
        self, message: Message, headers: Mapping[str, str], ahead: Ahead | None = None
    ) -> Any:
        """The ``result`` of a JSON-RPC ``message/send`` as JSON, as
        :meth:`JsonRpcTransport.send` reads it; :class:`RemoteCallError` when it fails. A
        call given up (cancelled) closes its connection: the upstream sees its caller go.
        ``ahead``: the request was sent already (:meth:`send_ahead`)."""
        method, response = await self._open(message, headers, ahead, stream=False)
        try:
            content = await response.read()
        except LeanHttpError as exc:
            response.release()
            raise RemoteCallError(f"{method} to {self._url} failed: {exc}") from None
        except BaseException:
            response.abort()
            raise
        response.release()
        content_type = response.headers.get("content-type", "")
        return result_of(response_json(content, response.status, content_type, method), method)

    @staticmethod
    def _results(events: list[bytes], method: str) -> list[Any]:
        results = (stream_envelope(data, method) for data in events)
        return [result for result in results if result is not SKIPPED]

    async def aclose(self) -> None:
        await self._http.aclose()
