"""The upstream reader of a relaying proxy: an A2A 0.3 JSON-RPC ``message/stream``
answer as lists of results, one list per read of the connection.

:class:`~trpc_bridge.client.jsonrpc.JsonRpcTransport` reads a stream line by line and
parses each frame with the strict parser that decoders need, which costs more than the
whole relay of a frame. This reader is what the relay (``RemoteAgent.relay``) needs and
no more: it splits the bytes of each read into SSE events in bulk (``data:`` lines
joined with ``\\n``, ``event:``, ``id:`` and comment lines ignored, any of the three
line endings) and parses each with orjson (UTF-8 only, no ``NaN``, no lone surrogates,
nesting bounded). A frame that is not JSON is skipped, as trpc's client skips it; a
JSON-RPC error frame ends the stream with :class:`RemoteCallError`, as on the event path.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any

import httpx
import orjson

from trpc_bridge.client.errors import RemoteCallError, failure_text
from trpc_bridge.client.jsonrpc import rpc_result

_DATA = b"data:"


class SseSplitter:
    """Bytes of an ``text/event-stream`` body → the ``data`` of each complete event."""

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        buffer = self._rest + chunk
        if b"\r" in buffer:
            held = buffer.endswith(b"\r")  # maybe the first half of "\r\n"
            body = buffer[:-1] if held else buffer
            buffer = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n") + (b"\r" if held else b"")
        events = buffer.split(b"\n\n")
        self._rest = events.pop()
        return [data for block in events if (data := _data(block)) is not None]

    def close(self) -> list[bytes]:
        """The data of a last event the body ended without its blank line."""
        rest, self._rest = self._rest.rstrip(b"\r\n"), b""
        data = _data(rest.replace(b"\r\n", b"\n").replace(b"\r", b"\n")) if rest else None
        return [] if data is None else [data]


def _data(block: bytes) -> bytes | None:
    if block.startswith(_DATA) and b"\n" not in block:  # the usual event: one data line
        value = block[5:]
        return value[1:] if value.startswith(b" ") else value
    lines = [
        line[6:] if line.startswith(b"data: ") else line[5:]
        for line in block.split(b"\n")
        if line.startswith(_DATA)
    ]
    return b"\n".join(lines) if lines else None


def _results(datas: list[bytes], method: str) -> list[Any]:
    results = []
    for data in datas:
        try:
            envelope = orjson.loads(data)
        except orjson.JSONDecodeError:
            continue  # not JSON: skipped, as trpc's reader skips it
        if isinstance(envelope, dict) and "jsonrpc" not in envelope and "error" not in envelope:
            results.append(envelope)  # a bare result, without the JSON-RPC envelope
        else:
            results.append(rpc_result(envelope, method))
    return results


async def stream_results(
    http: httpx.AsyncClient,
    url: str,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
) -> AsyncGenerator[list[Any], None]:
    """POST the JSON-RPC ``body`` (a ``message/stream`` call) to ``url``; yield the
    results of the answer, a list per read. Raises :class:`RemoteCallError` when the
    call fails, the server answers an error, or the connection breaks."""
    method = str(body.get("method", ""))
    request = http.build_request(
        "POST",
        url,
        content=orjson.dumps(body),
        headers={**headers, "Content-Type": "application/json", "Accept": "text/event-stream"},
    )
    try:
        response = await http.send(request, stream=True)
    except httpx.HTTPError as exc:
        raise RemoteCallError(f"{method} to {url} failed: {failure_text(exc)}") from exc
    try:
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            # An error before the stream started comes back as plain JSON.
            await response.aread()
            try:
                envelope = orjson.loads(response.content)
            except orjson.JSONDecodeError:
                kind = response.headers.get("content-type", "") or "no type"
                raise RemoteCallError(
                    f"{method}: HTTP {response.status_code} ({kind}), not JSON"
                ) from None
            yield [rpc_result(envelope, method)]
            return
        splitter = SseSplitter()
        async for chunk in response.aiter_bytes():
            if results := _results(splitter.feed(chunk), method):
                yield results
        if results := _results(splitter.close(), method):
            yield results
    except httpx.HTTPError as exc:
        raise RemoteCallError(f"{method} stream from {url} broke: {failure_text(exc)}") from exc
    finally:
        await response.aclose()
