"""A plain a2a-sdk server with an echo executor on JSON-RPC, HTTP+JSON and gRPC: the
yardstick the bridge's TCK figures are compared with (``tck_run.py --target sdk-echo``).

Run as a process: it binds free loopback ports and prints ``JSON-RPC <url>`` once it
listens, as ``trpc-bridge serve`` does, so the same runner starts either.
"""

from __future__ import annotations

import asyncio

import grpc
from a2a.helpers import new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, a2a_pb2_grpc
from starlette.applications import Starlette

from trpc_bridge.server.http.listener import HttpListener


class EchoExecutor(AgentExecutor):
    """Answers every message with one Message echoing its text, in the request's context."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = f"echo: {context.get_user_input()}"
        await event_queue.enqueue_event(new_text_message(text, context_id=context.context_id))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        return None


def _card(http_url: str, grpc_address: str) -> AgentCard:
    return AgentCard(
        name="sdk-echo",
        description="plain a2a-sdk echo server",
        version="1",
        supported_interfaces=[
            AgentInterface(url=f"{http_url}/", protocol_binding="JSONRPC", protocol_version="1.0"),
            AgentInterface(url=http_url, protocol_binding="HTTP+JSON", protocol_version="1.0"),
            AgentInterface(url=grpc_address, protocol_binding="GRPC", protocol_version="1.0"),
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[AgentSkill(id="echo", name="echo", description="echo", tags=["echo"])],
    )


async def main() -> None:
    http = HttpListener()
    grpc_server = grpc.aio.server()
    grpc_port = grpc_server.add_insecure_port("127.0.0.1:0")
    card = _card(http.url, f"127.0.0.1:{grpc_port}")
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(  # type: ignore[no-untyped-call]
        GrpcHandler(handler), grpc_server
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/"),
        *create_rest_routes(handler),  # last: it ends with a catch-all mount
    ]
    await grpc_server.start()
    await http.start(Starlette(routes=routes), log_level="error")
    print(f"JSON-RPC  {http.url}/", flush=True)
    await http.wait()


if __name__ == "__main__":
    asyncio.run(main())
