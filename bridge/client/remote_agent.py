"""A remote A2A agent as an :class:`~trpc_bridge.agent.Agent`: call a trpc-agent-go agent
(or any A2A agent) from Python, serve it again, proxy it, chain it.

Requests are written as trpc-agent-go's ``A2AAgent`` writes them (``docs/wire-spec.md``
§3.2, vectors Q01/Q02) and results decoded by :mod:`trpc_bridge.codecs.trpc_decode`.
Failures never raise out of :meth:`RemoteAgent.run`: they arrive as error events, as
with trpc's client — ``run_error`` for transport problems, ``flow_error`` for failed
remote tasks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx
from opentelemetry.trace import TracerProvider

from trpc_bridge.agent import Skill
from trpc_bridge.client.card import Endpoint, RemoteAgentError, ResolvedCard, fetch_card
from trpc_bridge.client.jsonrpc import JsonRpcTransport
from trpc_bridge.client.sdk_transport import SdkTransport
from trpc_bridge.client.transport import RemoteCallError, Transport, run_error_event
from trpc_bridge.codecs.a2a_frames import as_list, as_map, as_str
from trpc_bridge.codecs.trpc_decode import DataPartMapper, StreamDecoder, decode_result
from trpc_bridge.codecs.trpc_keys import INTERACTION_SPEC_VERSION, CodecError
from trpc_bridge.codecs.trpc_request import request_to_message
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.telemetry.client import inject_headers, trace_remote_run
from trpc_bridge.telemetry.spans import annotate_current_span

log = logging.getLogger(__name__)

#: The identity header trpc-agent-go's server reads (``x-user-id`` metadata on gRPC).
USER_ID_HEADER = "X-User-ID"
#: How long cancelling a remote task may hold up the consumer that went away.
_CANCEL_TIMEOUT = 5.0


def _skills(card: ResolvedCard) -> tuple[Skill, ...]:
    skills = []
    for entry in as_list(card.raw.get("skills")):
        skill = as_map(entry)
        tags = tuple(t for t in as_list(skill.get("tags")) if isinstance(t, str))
        skills.append(Skill(as_str(skill.get("name")), as_str(skill.get("description")), tags))
    return tuple(skills)


class RemoteAgent:
    """A remote A2A agent. Build it with :meth:`connect`; close it with :meth:`aclose`
    (or ``async with``)."""

    def __init__(
        self,
        card: ResolvedCard,
        endpoint: Endpoint,
        transport: Transport,
        http: httpx.AsyncClient,
        *,
        stream: bool | None = None,
        trpc_dialect: bool | None = None,
        mappers: Sequence[DataPartMapper] = (),
        headers: Mapping[str, str] | None = None,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        self.card = card
        self.endpoint = endpoint
        self.name = card.name
        self.description = card.description
        self._transport = transport
        self._http = http
        self._stream = card.streaming if stream is None else stream
        #: Send ``interaction_spec_version`` (trpc's rich output) — to servers declaring it.
        self.trpc_dialect = card.trpc_dialect if trpc_dialect is None else trpc_dialect
        self._mappers = tuple(mappers)
        self._headers = dict(headers or {})
        #: Where the ``invoke_agent`` CLIENT spans go; None = the global provider.
        self._tracer_provider = tracer_provider

    @property
    def skills(self) -> Sequence[Skill]:
        return _skills(self.card)

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        transport: str | None = None,
        version: str | None = None,
        stream: bool | None = None,
        trpc_dialect: bool | None = None,
        mappers: Sequence[DataPartMapper] = (),
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 10.0,
        idle_timeout: float | None = None,
        tracer_provider: TracerProvider | None = None,
    ) -> RemoteAgent:
        """Fetch the card at ``url`` and pick a transport (``jsonrpc`` / ``rest`` /
        ``grpc``) and A2A ``version`` (``0.3`` / ``1.0``); default: the best the card
        offers. ``idle_timeout`` bounds the wait for the next byte of a response
        (``None``: wait for ever, like trpc's client).
        Raises :class:`RemoteAgentError` when the agent cannot be used."""
        timeout = httpx.Timeout(idle_timeout, connect=connect_timeout)
        http = httpx.AsyncClient(timeout=timeout)
        try:
            card = await fetch_card(http, url)
            endpoint = card.choose(transport, version)
            wire: Transport
            if endpoint.binding == "JSONRPC":
                wire = JsonRpcTransport(http, endpoint)
            else:
                wire = SdkTransport(card.sdk_card(endpoint), timeout)
        except BaseException:
            await http.aclose()
            raise
        return cls(
            card,
            endpoint,
            wire,
            http,
            stream=stream,
            trpc_dialect=trpc_dialect,
            mappers=mappers,
            headers=headers,
            tracer_provider=tracer_provider,
        )

    async def aclose(self) -> None:
        await self._transport.aclose()
        await self._http.aclose()

    async def __aenter__(self) -> RemoteAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- running ----------------------------------------------------------------------

    def _request_headers(self, request: AgentRequest) -> dict[str, str]:
        headers = dict(self._headers)
        if request.user_id:
            headers[USER_ID_HEADER] = request.user_id
        inject_headers(headers)  # the caller's W3C trace context, if it has one
        return headers

    def run(
        self, request: AgentRequest, *, stream: bool | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Send ``request``; yield the remote agent's events. ``stream`` overrides the
        choice made at construction (default: the card's ``capabilities.streaming``)."""
        streaming = self._stream if stream is None else stream
        events = self._run_streaming(request) if streaming else self._run_unary(request)
        # The invoke_agent CLIENT span; _request_headers propagates it (tracing on only).
        return trace_remote_run(
            events,
            self.name,
            request,
            transport=self.endpoint.binding,
            protocol_version=self.endpoint.version,
            tracer_provider=self._tracer_provider,
        )

    def _message(self, request: AgentRequest) -> Any:
        version = INTERACTION_SPEC_VERSION if self.trpc_dialect else None
        return request_to_message(request, message_id=f"msg-{uuid.uuid4()}", spec_version=version)

    async def _run_unary(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        try:
            result = await self._transport.send(
                self._message(request), self._request_headers(request)
            )
            events = decode_result(
                result, mappers=self._mappers, invocation_id=request.invocation_id, author=self.name
            )
        except (RemoteCallError, CodecError) as exc:
            yield run_error_event(
                f"A2A request failed to {self.endpoint.url}: {exc}", request, self.name
            )
            return
        for event in events:
            yield event

    async def _run_streaming(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        headers = self._request_headers(request)
        decoder = StreamDecoder(
            mappers=self._mappers, invocation_id=request.invocation_id, author=self.name
        )
        completed = False
        try:
            async with contextlib.aclosing(
                self._transport.stream(self._message(request), headers)
            ) as results:
                async for result in results:
                    known = decoder.task_id
                    try:
                        events = decoder.feed(result)
                    except CodecError as exc:
                        log.warning("skipping undecodable frame from %s: %s", self.name, exc)
                        continue
                    if decoder.task_id != known:  # the invoke_agent span learns the task
                        annotate_current_span(task_id=decoder.task_id)
                    for event in events:
                        yield event
            completed = True
        except RemoteCallError as exc:
            completed = True  # the remote side is gone or refused: nothing to cancel
            yield run_error_event(
                f"A2A streaming request failed to {self.endpoint.url}: {exc}", request, self.name
            )
            return
        finally:
            if not completed and decoder.task_id and not decoder.finished:
                # The consumer went away (aclose / cancellation): stop the remote task too.
                await self._cancel(decoder.task_id, headers)
        if decoder.ended_early():
            async for event in self._recover(decoder, request, headers):
                yield event

    async def _cancel(self, task_id: str, headers: Mapping[str, str]) -> None:
        with contextlib.suppress(RemoteCallError, asyncio.TimeoutError):
            await asyncio.wait_for(self._transport.cancel_task(task_id, headers), _CANCEL_TIMEOUT)

    async def _recover(
        self, decoder: StreamDecoder, request: AgentRequest, headers: Mapping[str, str]
    ) -> AsyncIterator[AgentEvent]:
        """The stream ended before the task did (a dropped connection, a server that
        evicted a slow consumer): ask for the task, deliver what the stream missed."""
        with contextlib.suppress(RemoteCallError, CodecError):
            for event in decoder.feed(await self._transport.get_task(decoder.task_id, headers)):
                yield event
        if not decoder.finished:
            yield run_error_event(
                f"A2A stream from {self.endpoint.url} ended before task {decoder.task_id} "
                f"reached an end state (last state: {decoder.state})",
                request,
                self.name,
            )


__all__ = ["RemoteAgent", "RemoteAgentError"]
