"""A remote A2A agent as an :class:`~trpc_bridge.agent.Agent`: call a trpc-agent-go agent
(or any A2A agent) from Python, serve it again, proxy it, chain it.

Requests are written as trpc-agent-go's ``A2AAgent`` writes them (``docs/specs/trpc-interaction.md``
§3.2, vectors Q01/Q02) and results decoded by :mod:`trpc_bridge.codecs.trpc.decode`.
Failures never raise out of :meth:`RemoteAgent.run`: they arrive as error events, as
with trpc's client — ``run_error`` for transport problems, ``flow_error`` for failed
remote tasks.

tfrs progress (docs/specs/tfrs-progress.md) is read from every stream: new items go to the
``progress`` sink of :meth:`RemoteAgent.run` / :meth:`RemoteAgent.follow`, and a peer that does not
speak trpc's dialect has them turned into reasoning and tool events
(:mod:`trpc_bridge.client.progress`). Asynchronous calls: :meth:`RemoteAgent.start`
(``return_immediately``), then :meth:`RemoteAgent.follow` (resubscribe) or
:meth:`RemoteAgent.task_progress` (``tasks/get`` history, a coarse replay).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from typing import Any

import httpx
from a2a.types import Message
from opentelemetry.trace import TracerProvider

from trpc_bridge.agent import Skill
from trpc_bridge.client.auth_headers import OutboundAuth
from trpc_bridge.client.card import (
    Endpoint,
    ResolvedCard,
)
from trpc_bridge.client.card_trust import CardTrust
from trpc_bridge.client.connection import reach
from trpc_bridge.client.credentials import (
    CredentialOptions,
    ForwardedToken,
    TokenSource,
)
from trpc_bridge.client.errors import RemoteAgentError, RemoteCallError, run_error_event
from trpc_bridge.client.jsonrpc import JsonRpcTransport
from trpc_bridge.client.lean_http import LeanHttp, direct
from trpc_bridge.client.passthrough import Ahead, AnswerPassthrough, Passthrough, RawResults
from trpc_bridge.client.progress import ProgressSink, ProgressTap, progress_headers
from trpc_bridge.client.stream_read import StreamRead
from trpc_bridge.client.tls import ClientTls
from trpc_bridge.client.transport import Transport
from trpc_bridge.codecs.a2a.frames import (
    Frame,
    TaskFrame,
    as_list,
    as_map,
    as_str,
    read_result,
)
from trpc_bridge.codecs.dialects.decode import DialectStreamDecoder, decode_any_result
from trpc_bridge.codecs.errors import CodecError
from trpc_bridge.codecs.tfrs import EXTENSION_URI, ProgressConsumer, ProgressMerger
from trpc_bridge.codecs.trpc.decode import DataPartMapper
from trpc_bridge.codecs.trpc.keys import INTERACTION_SPEC_VERSION
from trpc_bridge.codecs.trpc.request import request_to_message
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.names import USER_ID_HEADER, new_id
from trpc_bridge.telemetry.client import inject_headers, trace_remote_run
from trpc_bridge.telemetry.spans import tracing_enabled

log = logging.getLogger(__name__)

#: How long a unary call follows a task the server answered while still working, and how
#: often it asks (``tasks/get``), at most.
_UNARY_TASK_TIMEOUT = 300.0
_UNARY_POLL_MAX = 1.0
_PENDING_STATES = frozenset({"submitted", "working"})


def _skills(card: ResolvedCard) -> tuple[Skill, ...]:
    skills = []
    for entry in as_list(card.raw.get("skills")):
        skill = as_map(entry)
        tags = tuple(t for t in as_list(skill.get("tags")) if isinstance(t, str))
        skills.append(Skill(as_str(skill.get("name")), as_str(skill.get("description")), tags))
    return tuple(skills)


class RemoteAgent:
    """A remote A2A agent, made by :meth:`connect`, closed by :meth:`aclose` (``async with``)."""

    #: Its tools run in the remote process, which records their spans (not this side).
    tools_run_elsewhere = True
    #: Its calls record the tokens the remote agent reports (``trace_remote_run``).
    meters_own_tokens = True

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
        progress: bool = False,
        auth: OutboundAuth | None = None,
        tls: ClientTls | None = None,
        lean: bool = False,
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
        #: Ask for tfrs progress on every run (always asked when a sink is given).
        self.progress = progress
        #: The credential sent with every request (``None``: none).
        self._auth = auth
        #: A proxy that forwards its caller's token: the server hands it over per request.
        self.forwards_caller_token = auth is not None and isinstance(auth.source, ForwardedToken)
        capabilities = as_map(card.raw.get("capabilities"))
        #: The card declares tfrs progress: the agent's working text is progress.
        self.speaks_tfrs = any(
            as_map(e).get("uri") == EXTENSION_URI for e in as_list(capabilities.get("extensions"))
        )
        self._tls = tls or ClientTls()
        #: Streams are read with the lean client (``lean``: ``http`` is ours, a plain
        #: client; JSON-RPC, no HTTP proxy on the way).
        self._lean = lean and isinstance(transport, JsonRpcTransport) and direct(endpoint.url)
        self._raw: RawResults | None = None

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
        progress: bool = False,
        card_trust: CardTrust | None = None,
        credentials: CredentialOptions | TokenSource | ForwardedToken | None = None,
        tls: ClientTls | None = None,
    ) -> RemoteAgent:
        """Fetch the card at ``url`` and pick a transport (``jsonrpc`` / ``rest`` /
        ``grpc``) and A2A ``version`` (``0.3`` / ``1.0``); default: the best the card
        offers. ``idle_timeout`` bounds the wait for the next byte of a response
        (``None``: wait for ever, like trpc's client). ``progress`` asks the agent for
        tfrs progress on every run. ``card_trust``: the card must be signed with one of
        these keys (:mod:`~trpc_bridge.client.card_trust`). ``credentials``: the token
        sent with every request, placed as the card's security scheme says
        (:mod:`~trpc_bridge.client.credentials`, :mod:`~trpc_bridge.client.auth_headers`);
        sent only to endpoints on ``url``'s host. ``tls``: the CAs that verify the server
        (default: the system's) and the client certificate to present, on every transport
        (:mod:`~trpc_bridge.client.tls`).
        Raises :class:`RemoteAgentError` when the agent cannot be used."""
        reached = await reach(
            url,
            transport=transport,
            version=version,
            connect_timeout=connect_timeout,
            idle_timeout=idle_timeout,
            card_trust=card_trust,
            credentials=credentials,
            tls=tls,
        )
        return cls(
            reached.card,
            reached.endpoint,
            reached.wire,
            reached.http,
            stream=stream,
            trpc_dialect=trpc_dialect,
            mappers=mappers,
            headers=headers,
            tracer_provider=tracer_provider,
            progress=progress,
            auth=reached.auth,
            tls=reached.tls,
            lean=True,
        )

    async def aclose(self) -> None:
        await self._transport.aclose()
        await self._http.aclose()
        if self._raw is not None:
            await self._raw.aclose()

    async def __aenter__(self) -> RemoteAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- running ----------------------------------------------------------------------

    async def _request_headers(
        self, request: AgentRequest, *, progress: bool = False
    ) -> dict[str, str]:
        """The headers of one call. Raises :class:`RemoteCallError` (a
        ``CredentialError``) when the credential cannot be had."""
        credentials = await self._auth.headers(request) if self._auth is not None else None
        return self._headers_with(request, credentials, progress=progress)

    def _headers_with(
        self, request: AgentRequest, credentials: Mapping[str, str] | None, *, progress: bool
    ) -> dict[str, str]:
        headers = {**self._headers, **(credentials or {})}
        if progress or self.progress:
            headers.update(progress_headers(self.endpoint.version))
        if request.user_id:
            headers[USER_ID_HEADER] = request.user_id
        inject_headers(headers)  # the caller's W3C trace context, if it has one
        return headers

    def send_ahead(self, request: AgentRequest, *, stream: bool) -> Ahead | None:
        """``request`` sent before its run reaches this agent (``server/proxying/ahead.py``):
        lean client, no credential to fetch, no client span, a kept-alive connection; None:
        not sent. The run's meters start when it was sent (:meth:`run`'s ``started``)."""
        through = self.passes_through if stream else self.answers_through
        if not through or self._auth is not None or tracing_enabled(self._tracer_provider):
            return None
        headers = self._headers_with(request, None, progress=False)
        return self._raw_results().send_ahead(self._message(request), headers, stream=stream)

    async def _call_of(
        self, request: AgentRequest, ahead: Ahead | None, *, progress: bool
    ) -> tuple[Mapping[str, str], Message]:
        """The headers and message of ``request``'s call (``ahead``'s when sent already)."""
        if ahead is not None:
            return ahead.headers, ahead.message
        return await self._request_headers(request, progress=progress), self._message(request)

    @property
    def passes_through(self) -> bool:
        """A streamed run can take a :class:`~trpc_bridge.client.passthrough.Passthrough`:
        A2A 0.3 JSON-RPC in trpc's dialect, read with the lean client (an agent made by
        :meth:`connect`, reached without an HTTP proxy), and no tfrs progress asked for."""
        return self._stream and self.answers_through

    @property
    def answers_through(self) -> bool:
        """A unary run can take an
        :class:`~trpc_bridge.client.passthrough.AnswerPassthrough`: as
        :attr:`passes_through`, the answer being one ``message/send`` result."""
        return (
            self._lean
            and self.trpc_dialect
            and not self.progress
            and self.endpoint.version == "0.3"
        )

    def run(
        self,
        request: AgentRequest,
        *,
        stream: bool | None = None,
        progress: ProgressSink | None = None,
        passthrough: Passthrough | None = None,
        answer: AnswerPassthrough | None = None,
        started: float | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Send ``request``; yield the remote agent's events. ``stream`` overrides the
        choice made at construction (default: the card's ``capabilities.streaming``).
        ``progress`` receives each new tfrs progress item (and asks the agent for them).
        ``passthrough`` sees each result of a streamed run first (when :attr:`passes_through`),
        ``answer`` the result of a unary one (when :attr:`answers_through`): see
        :mod:`~trpc_bridge.client.passthrough`. ``started``: when the request was sent
        ahead (:meth:`send_ahead`, ``time.perf_counter``): its metrics time it from then."""
        streaming = self._stream if stream is None else stream
        if passthrough is not None and not (streaming and progress is None and self.passes_through):
            passthrough = None
        if answer is not None and (streaming or progress is not None or not self.answers_through):
            answer = None
        events = (
            self._run_streaming(request, progress, passthrough)
            if streaming
            else self._run_unary(request, progress, answer)
        )
        # The invoke_agent CLIENT span; _request_headers propagates it (tracing on only).
        return trace_remote_run(
            events,
            self.name,
            request,
            transport=self.endpoint.binding,
            protocol_version=self.endpoint.version,
            tracer_provider=self._tracer_provider,
            started=started,
        )

    def _message(self, request: AgentRequest) -> Message:
        version = INTERACTION_SPEC_VERSION if self.trpc_dialect else None
        return request_to_message(request, message_id=new_id("msg"), spec_version=version)

    def _tap(self, request: AgentRequest, sink: ProgressSink | None) -> ProgressTap:
        return ProgressTap(
            sink=sink,
            as_events=not self.trpc_dialect,  # trpc's artifacts already carry these
            invocation_id=request.invocation_id,
            author=self.name,
            speaks_tfrs=self.speaks_tfrs,
        )

    async def _run_unary(
        self,
        request: AgentRequest,
        sink: ProgressSink | None,
        answer: AnswerPassthrough | None = None,
    ) -> AsyncIterator[AgentEvent]:
        ahead = answer.ahead() if answer is not None else None
        try:
            headers, message = await self._call_of(request, ahead, progress=sink is not None)
            if answer is not None:  # read as JSON, offered before it is decoded
                result = await self._raw_results().answer(message, headers, ahead)
                if answer.take_answer(result):
                    return
                frame = read_result(result)
            else:
                frame = await self._transport.send(message, headers)
            frame = await self._until_done(frame, headers)
            progress_events, frame = self._tap(request, sink).take(frame)
            events = progress_events + decode_any_result(
                frame, mappers=self._mappers, invocation_id=request.invocation_id, author=self.name
            )
        except (RemoteCallError, CodecError) as exc:
            yield run_error_event(
                f"A2A request failed to {self.endpoint.url}: {exc}", request, self.name
            )
            return
        for event in events:
            yield event

    async def _until_done(self, frame: Frame, headers: Mapping[str, str]) -> Frame:
        """A non-blocking server answers ``SendMessage`` with a task still submitted or
        working: follow it with ``tasks/get`` until it ends. Raises
        :class:`RemoteCallError` when it does not end within the timeout."""
        delay, waited = 0.05, 0.0
        while isinstance(frame, TaskFrame) and frame.state in _PENDING_STATES:
            if waited >= _UNARY_TASK_TIMEOUT:
                raise RemoteCallError(
                    f"task {frame.task_id} still {frame.state} after {waited:.0f}s"
                )
            await asyncio.sleep(delay)
            waited += delay
            delay = min(delay * 2, _UNARY_POLL_MAX)
            frame = await self._transport.get_task(frame.task_id, headers)
        return frame

    def _raw_results(self) -> RawResults:
        if self._raw is None:
            assert isinstance(self._transport, JsonRpcTransport)
            timeout = self._http.timeout
            http = LeanHttp(
                self.endpoint.url,
                connect_timeout=timeout.connect,
                idle_timeout=timeout.read,
                ssl_context=self._tls.ssl_context(),
            )
            self._raw = RawResults(self._transport, self.endpoint.url, http)
        return self._raw

    async def _run_streaming(
        self, request: AgentRequest, sink: ProgressSink | None, passthrough: Passthrough | None
    ) -> AsyncIterator[AgentEvent]:
        ahead = passthrough.ahead() if passthrough is not None else None
        # Headers are made here, inside the invoke_agent span, so they carry its context.
        try:
            headers, message = await self._call_of(request, ahead, progress=sink is not None)
        except RemoteCallError as exc:
            yield run_error_event(f"A2A request to {self.endpoint.url}: {exc}", request, self.name)
            return
        source = self._raw_results() if self._lean else self._transport

        def open_stream() -> AsyncGenerator[Any, None]:
            if passthrough is not None:
                return self._raw_results().batches(message, headers, ahead)
            return source.stream(message, headers)

        async with contextlib.aclosing(
            self._decode_stream(
                open_stream,
                request,
                headers,
                sink,
                owned=True,
                passthrough=passthrough,
            )
        ) as events:
            async for event in events:
                yield event

    def _decode_stream(
        self,
        open_stream: Callable[[], AsyncGenerator[Any, None]],
        request: AgentRequest,
        headers: Mapping[str, str],
        sink: ProgressSink | None,
        *,
        owned: bool,
        passthrough: Passthrough | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        """Decode one stream of frames (:class:`~trpc_bridge.client.stream_read.StreamRead`);
        ``owned``: the task is ours, so leaving early cancels it."""
        decoder = DialectStreamDecoder(
            mappers=self._mappers, invocation_id=request.invocation_id, author=self.name
        )
        read = StreamRead(
            self._transport,
            self.name,
            self.endpoint.url,
            decoder,
            self._tap(request, sink),
            request,
            headers,
        )
        # Results as JSON come from the lean client, which only a passthrough reads with.
        read_frame = self._raw_results().frame if passthrough is not None else None
        return read.events(open_stream, owned=owned, passthrough=passthrough, read_frame=read_frame)

    # --- asynchronous calls -----------------------------------------------------------

    async def start(self, request: AgentRequest, *, progress: bool = False) -> str:
        """Send ``request`` with ``return_immediately``; the id of the task it started.
        Follow it with :meth:`follow`, or read it with :meth:`task_progress`.
        Raises :class:`RemoteAgentError` when the agent answers without a task."""
        try:
            headers = await self._request_headers(request, progress=progress)
            frame = await self._transport.send(
                self._message(request), headers, return_immediately=True
            )
            task_id = getattr(frame, "task_id", "")
        except (RemoteCallError, CodecError) as exc:
            raise RemoteAgentError(f"A2A request failed to {self.endpoint.url}: {exc}") from exc
        if not task_id:
            raise RemoteAgentError(f"{self.name} answered without starting a task")
        return task_id

    async def follow(
        self,
        task_id: str,
        *,
        request: AgentRequest | None = None,
        progress: ProgressSink | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Subscribe to a running task (``SubscribeToTask`` / ``tasks/resubscribe``): its
        events from now on, progress to ``progress``. ``request`` supplies the identity
        and invocation id; leaving early leaves the task running."""
        request = request or AgentRequest()
        try:
            headers = await self._request_headers(request)
        except RemoteCallError as exc:
            yield run_error_event(f"subscribe to {self.endpoint.url}: {exc}", request, self.name)
            return
        async with contextlib.aclosing(
            self._decode_stream(
                lambda: self._transport.subscribe(task_id, headers),
                request,
                headers,
                progress,
                owned=False,
            )
        ) as events:
            async for event in events:
                yield event

    async def task_progress(self, task_id: str, *, user_id: str = "") -> ProgressMerger:
        """The progress a task's history kept (``tasks/get``: a coarse replay, cut by the
        server's history length); :class:`RemoteAgentError` when it cannot be read."""
        try:
            headers = await self._request_headers(AgentRequest(user_id=user_id))
            frame = await self._transport.get_task(task_id, headers)
        except (RemoteCallError, CodecError) as exc:
            raise RemoteAgentError(f"tasks/get failed at {self.endpoint.url}: {exc}") from exc
        consumer = ProgressConsumer()
        consumer.feed_frame(frame)
        return consumer.merger(task_id)


__all__ = ["RemoteAgent", "RemoteAgentError"]
