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
from trpc_bridge.client.lean_http import LeanHttp, LeanHttpError
from trpc_bridge.client.sse import SseParser
from trpc_bridge.codecs.a2a.frames import Frame
from trpc_bridge.codecs.a2a.json03 import json_bytes


class Passthrough(Protocol):
    """What a server offers a streamed run (see the module doc)."""

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

    async def batches(
        self, message: Message, headers: Mapping[str, str]
    ) -> AsyncGenerator[list[Any], None]:
        """Every result as JSON, in order, in the batches they arrived in (for a
        passthrough, which sees them first). Between two batches the event loop runs
        others (not after the batch that completes the answer): relayed results are
        handed on without any other await in between."""
        method, body, sent = self._transport.stream_call(message, headers)
        self._method = method
        try:
            response = await self._http.post(self._path, json_bytes(body), sent)
        except LeanHttpError as exc:
            raise RemoteCallError(f"{method} to {self._url} failed: {exc}") from None
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

    async def answer(self, message: Message, headers: Mapping[str, str]) -> Any:
        """The ``result`` of a JSON-RPC ``message/send`` as JSON, as
        :meth:`JsonRpcTransport.send` reads it; :class:`RemoteCallError` when it fails. A
        call given up (cancelled) closes its connection: the upstream sees its caller go."""
        method, body, sent = self._transport.send_call(message, headers)
        try:
            response = await self._http.post(self._path, json_bytes(body), sent)
        except LeanHttpError as exc:
            raise RemoteCallError(f"{method} to {self._url} failed: {exc}") from None
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
