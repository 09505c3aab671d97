"""``trpc_bridge.v1.AgentHost`` on the bridge's gRPC port: the door through which a
program in any language runs the served agent (a Python agent, a Go agent behind
``proxy``, a sidecar behind ``--agent grpc://``) and reads the model's events directly,
without speaking A2A (``protos/trpc_bridge/v1/agent.proto``).

A thin door over :class:`~trpc_bridge.server.runner.AgentRunner`, like ``/agui``: the
runner applies the identity rule (the principal the gRPC edge verified; the request's
``user_id`` field is overwritten with it), attaches the caller's trace context and opens
the SERVER span, turns an agent that raises into a ``run_error`` event, and closes the
agent's iterator when the caller cancels the call or goes away.

Bad input gets a precise status and the server keeps serving: an unusable identity or a
request that violates the model is ``INVALID_ARGUMENT``. An event of the agent that the
contract cannot carry (a NaN timestamp, a choice index beyond int32) ends the run with a
``run_error`` event saying so.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc

from trpc_bridge.codecs.agent_proto import (
    ProtoModelError,
    event_to_proto,
    info_to_proto,
    request_from_proto,
)
from trpc_bridge.events import AgentEvent, ErrorType
from trpc_bridge.names import TRANSPORT_AGENT_HOST
from trpc_bridge.server.auth.answers import answer
from trpc_bridge.server.auth.errors import AuthError
from trpc_bridge.server.identity import grpc_principal, lower_headers
from trpc_bridge.server.runner import AgentRunner
from trpc_bridge.v1 import agent_pb2 as pb
from trpc_bridge.v1 import agent_pb2_grpc


class AgentHostDoor(agent_pb2_grpc.AgentHostServicer):
    """The ``AgentHost`` servicer of one server's agent."""

    def __init__(self, runner: AgentRunner) -> None:
        self._runner = runner

    async def Describe(self, request: pb.DescribeRequest, context: Any) -> pb.AgentInfo:
        agent = self._runner.agent
        return info_to_proto(agent.name, agent.description, agent.skills)

    async def Run(self, request: pb.AgentRequest, context: Any) -> AsyncIterator[pb.AgentEvent]:
        try:
            caller = self._runner.caller_of(
                grpc_principal(),
                lower_headers(context.invocation_metadata()),
                transport=TRANSPORT_AGENT_HOST,
            )
            agent_request = request_from_proto(request)
        except AuthError as exc:
            await context.abort(answer(exc).grpc_code, exc.message)
        except ProtoModelError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        agent_request.user_id = caller.user_id
        events = self._runner.run(agent_request, caller, encoding="agent_proto")
        try:
            async for event in events:
                try:
                    message = event_to_proto(event)
                except ProtoModelError as exc:
                    failure = AgentEvent.failure(
                        f"the agent's event cannot be sent over AgentHost: {exc}",
                        type=ErrorType.RUN,
                    )
                    yield event_to_proto(failure)
                    return
                yield message
        finally:  # also when the caller cancels or goes away: the runner stops the agent
            await events.aclose()


def add_agent_host(runner: AgentRunner, server: grpc.aio.Server) -> None:
    agent_pb2_grpc.add_AgentHostServicer_to_server(  # type: ignore[no-untyped-call]
        AgentHostDoor(runner), server
    )
