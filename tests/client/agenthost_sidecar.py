"""A scripted ``AgentHost`` sidecar on 127.0.0.1 for :class:`GrpcAgent`'s tests: it
serves the demo agent's events, and can misbehave the ways a foreign process does
(slow, an event that violates the model, bytes that are no event, a dropped stream).
Every call's request, metadata and whether it was cancelled are recorded."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.codecs.agent_proto import event_to_proto, info_to_proto, request_from_proto
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.v1 import agent_pb2 as pb

SERVICE = "trpc_bridge.v1.AgentHost"


@dataclass
class Call:
    request: AgentRequest
    metadata: dict[str, str]
    sent: list[AgentEvent] = field(default_factory=list)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class Script:
    """What the sidecar does on Run; the defaults behave."""

    #: Seconds before the first event (a slow agent).
    first_delay: float = 0.0
    #: Seconds between events.
    delay: float = 0.0
    #: After this many events: drop the stream with this status.
    abort_after: int | None = None
    abort_code: grpc.StatusCode = grpc.StatusCode.INTERNAL
    #: After this many events: send one whose content part type is not in the model.
    invalid_after: int | None = None
    #: After this many events: send bytes that do not parse as an AgentEvent.
    garbage_after: int | None = None


class ScriptedSidecar:
    def __init__(self, script: Script | None = None) -> None:
        self.script = script or Script()
        self.agent = demo_agent()
        self.calls: list[Call] = []

    async def describe(self, request: pb.DescribeRequest, context: Any) -> pb.AgentInfo:
        return info_to_proto(self.agent.name, self.agent.description, self.agent.skills)

    async def run(self, request: pb.AgentRequest, context: Any) -> AsyncIterator[Any]:
        metadata = {key: value for key, value in context.invocation_metadata() or ()}
        call = Call(request_from_proto(request), metadata)
        self.calls.append(call)
        script = self.script
        try:
            await asyncio.sleep(script.first_delay)
            count = -1
            async for event in self.agent.run(call.request):
                count += 1
                if count == script.abort_after:
                    await context.abort(script.abort_code, "sidecar lost its model")
                if count == script.invalid_after:
                    bad = event_to_proto(event)
                    bad.choices.add().message.content_parts.add(type="video")
                    yield bad.SerializeToString()
                    continue
                if count == script.garbage_after:
                    yield b"\xff\xff\xff"
                    continue
                call.sent.append(event)
                yield event_to_proto(event).SerializeToString()
                await asyncio.sleep(script.delay)
        except (asyncio.CancelledError, GeneratorExit):
            # grpc.aio cancels the handler, or closes it when a write finds the call gone.
            call.cancelled.set()
            raise

    def handler(self) -> grpc.GenericRpcHandler:
        """Run's responses are serialised here, so that the script can send raw bytes."""
        return grpc.method_handlers_generic_handler(
            SERVICE,
            {
                "Run": grpc.unary_stream_rpc_method_handler(
                    self.run,
                    request_deserializer=pb.AgentRequest.FromString,
                    response_serializer=lambda raw: raw,
                ),
                "Describe": grpc.unary_unary_rpc_method_handler(
                    self.describe,
                    request_deserializer=pb.DescribeRequest.FromString,
                    response_serializer=pb.AgentInfo.SerializeToString,
                ),
            },
        )


async def start(sidecar: ScriptedSidecar, port: int = 0) -> tuple[grpc.aio.Server, int]:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers([sidecar.handler()])
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    return server, bound


@contextlib.asynccontextmanager
async def serving(sidecar: ScriptedSidecar) -> AsyncIterator[str]:
    """The sidecar on a free loopback port; yields its ``grpc://`` URL."""
    server, port = await start(sidecar)
    try:
        yield f"grpc://127.0.0.1:{port}"
    finally:
        await server.stop(grace=None)
