"""One stream of frames from a remote A2A agent read as agent events (what
:class:`~trpc_bridge.client.remote_agent.RemoteAgent` does for a streamed run and for a
subscription): decoded by the dialect decoder, or offered first to a passthrough (the
proxy's relay, ``docs/serving.md``); a stream that ends before its task is recovered with
``tasks/get``; a consumer that leaves its own task early cancels it upstream."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import Any

from trpc_bridge.client.errors import RemoteCallError, run_error_event
from trpc_bridge.client.passthrough import Passthrough
from trpc_bridge.client.progress import ProgressTap
from trpc_bridge.client.transport import Transport
from trpc_bridge.codecs.a2a.frames import Frame, read_result
from trpc_bridge.codecs.dialects.decode import DialectStreamDecoder
from trpc_bridge.codecs.errors import CodecError
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.telemetry.spans import annotate_current_span

#: How long cancelling a remote task may hold up the consumer that went away.
_CANCEL_TIMEOUT = 5.0


class StreamRead:
    """The reading of one stream for ``request`` from the agent ``name`` at ``url``."""

    def __init__(
        self,
        transport: Transport,
        name: str,
        url: str,
        decoder: DialectStreamDecoder,
        tap: ProgressTap,
        request: AgentRequest,
        headers: Mapping[str, str],
    ) -> None:
        self._transport = transport
        self._name = name
        self._url = url
        self._decoder = decoder
        self._tap = tap
        self._request = request
        self._headers = headers

    async def events(
        self,
        open_stream: Callable[[], AsyncGenerator[Any, None]],
        *,
        owned: bool,
        passthrough: Passthrough | None = None,
        read_frame: Callable[[Any], Frame | None] | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        """The events of the stream ``open_stream`` opens; ``owned``: the task is ours,
        so leaving early cancels it (a subscription leaves the task running). With a
        ``passthrough`` the stream is of batches of results as JSON
        (:meth:`~trpc_bridge.client.passthrough.RawResults.batches`): it takes those it
        handles itself, the others are read (``read_frame``) and decoded."""
        decoder, tap, request = self._decoder, self._tap, self._request
        completed = False

        def absorb() -> None:
            """The decoder's state as if it had decoded the results ``passthrough`` took."""
            for standing in passthrough.standing() if passthrough is not None else ():
                with contextlib.suppress(CodecError):
                    decoder.feed(tap.take(read_result(standing))[1])

        def decode(frame: Frame) -> list[AgentEvent]:
            known = decoder.task_id
            progress_events, frame = tap.take(frame)
            events = decoder.feed(frame)
            if decoder.task_id != known:  # the invoke_agent span learns the task
                annotate_current_span(task_id=decoder.task_id)
            return progress_events + events

        try:
            async with contextlib.aclosing(open_stream()) as items:
                async for item in items:
                    if passthrough is None:
                        for event in decode(item):
                            yield event
                        continue
                    assert read_frame is not None
                    taken = False
                    for result in item:  # a batch of results as JSON
                        # After the task's end the decoder drops what follows: decoded.
                        if not decoder.finished and passthrough.take(result):
                            taken = True
                            continue
                        absorb()
                        bare = decoder.bare_type(result)
                        if bare is not None and passthrough.take_bare(bare):
                            decoder.absorb_bare()
                            taken = True
                            continue
                        frame = read_frame(result)
                        for event in decode(frame) if frame is not None else ():
                            yield event
                    if taken:
                        await passthrough.pace()
            completed = True
        except RemoteCallError as exc:
            completed = True  # the remote side is gone or refused: nothing to cancel
            absorb()
            yield run_error_event(
                f"A2A streaming request failed to {self._url}: {exc}", request, self._name
            )
            return
        finally:
            absorb()
            if owned and not completed and decoder.task_id and not decoder.finished:
                # The consumer went away (aclose / cancellation): stop the remote task too.
                await self._cancel(decoder.task_id)
        if decoder.ended_early():
            async for event in self._recover():
                yield event

    async def _cancel(self, task_id: str) -> None:
        with contextlib.suppress(RemoteCallError, asyncio.TimeoutError):
            await asyncio.wait_for(
                self._transport.cancel_task(task_id, self._headers), _CANCEL_TIMEOUT
            )

    async def _recover(self) -> AsyncIterator[AgentEvent]:
        """The stream ended before the task did (a dropped connection, a server that
        evicted a slow consumer): ask for the task, deliver what the stream missed
        (progress included: its history adds only the blocks the stream lost)."""
        decoder = self._decoder
        with contextlib.suppress(RemoteCallError, CodecError):
            progress_events, task = self._tap.take(
                await self._transport.get_task(decoder.task_id, self._headers)
            )
            for event in progress_events + decoder.feed(task):
                yield event
        if not decoder.finished:
            yield run_error_event(
                f"A2A stream from {self._url} ended before task {decoder.task_id} "
                f"reached an end state (last state: {decoder.state})",
                self._request,
                self._name,
            )
