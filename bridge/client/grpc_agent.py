"""An agent in another process, any language, behind ``trpc_bridge.v1.AgentHost``
(``protos/trpc_bridge/v1/agent.proto``), as an :class:`~trpc_bridge.agent.Agent`:
``trpc-bridge serve --agent grpc://host:port`` serves it like a Python agent.

Per run: one ``AgentHost.Run`` call with the caller's identity (``x-user-id``) and W3C
trace context (``traceparent`` …, of the ``invoke_agent`` CLIENT span) as metadata.
Closing the event iterator cancels the call, which is the contract's cancellation.

Like :class:`~trpc_bridge.client.RemoteAgent`, failures never raise out of :meth:`run`:
a sidecar that is down, too slow, sends an event that violates the model or drops the
stream ends the run with one ``run_error`` event, and the call is cancelled.

Options, also as URL query parameters (``grpc://host:port?timeout=30&idle_timeout=5``):

- ``connect_timeout`` (default 10 s): how long a run (and :meth:`GrpcAgent.connect`) waits
  for the sidecar to accept a connection. gRPC reconnects with exponential backoff (0.1 s
  up to 2 s) meanwhile, and a run refused as ``UNAVAILABLE`` before any event arrived is
  sent again within that time: a sidecar that is restarting is waited for, not failed.
- ``timeout`` (default none): the whole run's deadline (the gRPC deadline).
- ``idle_timeout`` (default none): the longest wait for the next event.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import grpc
from opentelemetry.trace import TracerProvider

from trpc_bridge.agent import Skill
from trpc_bridge.client.errors import RemoteAgentError, run_error_event
from trpc_bridge.codecs.agent_proto import (
    ProtoModelError,
    event_from_proto,
    info_from_proto,
    request_to_proto,
)
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.names import USER_ID_HEADER
from trpc_bridge.telemetry.client import inject_headers, trace_remote_run
from trpc_bridge.v1 import agent_pb2 as pb
from trpc_bridge.v1 import agent_pb2_grpc

SCHEME = "grpc"
#: The identity metadata key, the same one the bridge reads on its own gRPC port.
USER_ID_METADATA = USER_ID_HEADER.lower()
#: Longest error detail from the sidecar copied into the run_error message.
_DETAIL_CHARS = 300
_CHANNEL_OPTIONS = [
    # Reconnect quickly after a sidecar restart (gRPC's defaults start at 1 s, cap at 120 s).
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
    # Events may carry inline files; gRPC's default cap is 4 MiB.
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
]
#: Pause before sending a run again that the sidecar refused as UNAVAILABLE, doubled each time.
_FIRST_RETRY_DELAY = 0.1
_MAX_RETRY_DELAY = 2.0


@dataclass(frozen=True)
class GrpcAgentOptions:
    """Seconds; ``None`` = no limit. See the module doc."""

    connect_timeout: float = 10.0
    timeout: float | None = None
    idle_timeout: float | None = None


def parse_agent_url(url: str, base: GrpcAgentOptions | None = None) -> tuple[str, GrpcAgentOptions]:
    """``grpc://host:port?option=seconds…`` → the gRPC target and the options (``base``
    overridden by the query). :class:`ValueError` says what is wrong with the URL."""
    parts = urlsplit(url)
    if parts.scheme != SCHEME or not parts.netloc or parts.path not in ("", "/"):
        raise ValueError(f"expected grpc://host:port[?option=seconds&…], got {url!r}")
    known = {f.name for f in fields(GrpcAgentOptions)}
    overrides: dict[str, float | None] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key not in known:
            raise ValueError(f"unknown option {key!r} in {url!r} (known: {', '.join(known)})")
        try:
            seconds = float(value.removesuffix("s")) if value else None
        except ValueError:
            raise ValueError(f"option {key}={value!r} is not a number of seconds") from None
        if seconds is not None and not seconds > 0:
            raise ValueError(f"option {key}={value!r} must be positive")
        overrides[key] = seconds
    options = replace(base or GrpcAgentOptions(), **overrides)  # type: ignore[arg-type]
    if options.connect_timeout is None:
        raise ValueError("connect_timeout needs a value")
    return parts.netloc, options


def _status_text(error: grpc.aio.AioRpcError) -> str:
    details = (error.details() or "").strip()
    if len(details) > _DETAIL_CHARS:
        details = details[:_DETAIL_CHARS] + "…"
    return f"{error.code().name}: {details}" if details else error.code().name


def past_deadline(code: grpc.StatusCode, elapsed: float, timeout: float | None) -> bool:
    """A call that ended with ``code`` after ``elapsed`` seconds failed for its deadline
    (``timeout``): its own expiry, or the sidecar's answer to it. A server enforces the
    deadline too and ends the stream when it passes (RST_STREAM CANCEL, which grpc reports
    as ``CANCELLED``); on a busy machine that can arrive before the client's own timer
    fires, and the run did not finish in time all the same."""
    if not timeout:
        return False
    return code == grpc.StatusCode.DEADLINE_EXCEEDED or (
        code == grpc.StatusCode.CANCELLED and elapsed >= timeout
    )


class GrpcAgent:
    """The agent behind an ``AgentHost`` port. Build it with :meth:`connect`; close it
    with :meth:`aclose` (or ``async with``)."""

    #: Its calls record the tokens the agent reports (``trace_remote_run``).
    meters_own_tokens = True

    def __init__(
        self,
        url: str,
        channel: grpc.aio.Channel,
        info: pb.AgentInfo,
        options: GrpcAgentOptions,
        *,
        tracer_provider: TracerProvider | None = None,
    ) -> None:
        self.url = url
        self.name, self.description, self._skills = info_from_proto(info)
        self.options = options
        self._channel = channel
        self._stub = agent_pb2_grpc.AgentHostStub(channel)  # type: ignore[no-untyped-call]
        self._tracer_provider = tracer_provider

    @property
    def skills(self) -> Sequence[Skill]:
        return self._skills

    @classmethod
    async def connect(
        cls,
        url: str,
        options: GrpcAgentOptions | None = None,
        *,
        tracer_provider: TracerProvider | None = None,
    ) -> GrpcAgent:
        """Connect to ``grpc://host:port`` and ask the agent to describe itself (waiting
        up to ``connect_timeout`` for the sidecar to come up). Raises
        :class:`~trpc_bridge.client.RemoteAgentError` when it cannot be used."""
        try:
            target, resolved = parse_agent_url(url, options)
        except ValueError as exc:
            raise RemoteAgentError(str(exc)) from exc
        channel = grpc.aio.insecure_channel(target, options=_CHANNEL_OPTIONS)
        try:
            stub = agent_pb2_grpc.AgentHostStub(channel)  # type: ignore[no-untyped-call]
            info = await stub.Describe(
                pb.DescribeRequest(), timeout=resolved.connect_timeout, wait_for_ready=True
            )
        except grpc.aio.AioRpcError as exc:
            await channel.close()
            raise RemoteAgentError(
                f"AgentHost.Describe at {url} failed: {_status_text(exc)}"
            ) from exc
        except BaseException:
            await channel.close()
            raise
        return cls(url, channel, info, resolved, tracer_provider=tracer_provider)

    async def aclose(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> GrpcAgent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- running ----------------------------------------------------------------------

    def run(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        """Run the agent on ``request``; its events, or one ``run_error`` at the end."""
        return trace_remote_run(
            self._run(request), self.name, request, tracer_provider=self._tracer_provider
        )

    def _metadata(self, request: AgentRequest) -> list[tuple[str, str]]:
        headers: dict[str, str] = {}
        if request.user_id:
            if not (request.user_id.isascii() and request.user_id.isprintable()):
                raise ProtoModelError("the user id is not printable ASCII (gRPC metadata)")
            headers[USER_ID_METADATA] = request.user_id
        inject_headers(headers)  # the invoke_agent span, current while _run steps
        return list(headers.items())

    def _failure(self, what: str, request: AgentRequest) -> AgentEvent:
        return run_error_event(f"agent at {self.url} {what}", request, self.name)

    async def _run(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        try:
            message = request_to_proto(request)
            metadata = self._metadata(request)
        except ProtoModelError as exc:
            yield self._failure(f"cannot be sent this request: {exc}", request)
            return
        loop = asyncio.get_running_loop()
        connect_by = loop.time() + self.options.connect_timeout
        delay = _FIRST_RETRY_DELAY
        refusal = ""  # why the last attempt was refused, if it was
        while True:
            try:
                await asyncio.wait_for(self._channel.channel_ready(), connect_by - loop.time())
            except TimeoutError:
                timeout = self.options.connect_timeout
                what = f"is unreachable (no connection within {timeout:g}s)"
                yield self._failure(f"{what}{refusal}", request)
                return
            call = self._stub.Run(message, metadata=metadata, timeout=self.options.timeout)
            started = loop.time()
            received = False
            try:
                while True:
                    reply = await self._next(call)
                    if reply is grpc.aio.EOF:
                        if await call.code() == grpc.StatusCode.OK:
                            return
                        # grpc.aio ends some failed calls (metadata it refused to send)
                        # with EOF: raise their status like any other
                        raise grpc.aio.AioRpcError(
                            await call.code(),
                            await call.initial_metadata(),
                            await call.trailing_metadata(),
                            await call.details(),
                        )
                    if reply is None:  # grpc.aio's answer to bytes it could not parse
                        raise ProtoModelError("the message does not parse as an AgentEvent")
                    received = True
                    yield event_from_proto(reply)
            except grpc.aio.AioRpcError as exc:
                code = exc.code()
                refused = code == grpc.StatusCode.UNAVAILABLE and not received
                if refused and loop.time() + delay < connect_by:
                    refusal = f" after refusing the run: {_status_text(exc)}"
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, _MAX_RETRY_DELAY)
                    continue
                if past_deadline(code, loop.time() - started, self.options.timeout):
                    what = f"did not finish within {self.options.timeout:g}s"
                else:
                    what = f"failed: {_status_text(exc)}"
                yield self._failure(what, request)
                return
            except TimeoutError:
                idle = self.options.idle_timeout
                yield self._failure(f"sent no event for {idle:g}s", request)
                return
            except ProtoModelError as exc:
                yield self._failure(f"sent an event that violates the model: {exc}", request)
                return
            finally:
                call.cancel()  # the consumer went away, or the run failed: stop the agent

    async def _next(self, call: Any) -> Any:
        """The next message of ``call`` (or ``grpc.aio.EOF``), within ``idle_timeout``."""
        if self.options.idle_timeout is None:
            return await call.read()
        return await asyncio.wait_for(call.read(), self.options.idle_timeout)
