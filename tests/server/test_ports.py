"""A busy port is a clear ``OSError`` at start (HTTP or gRPC), nothing is left running,
and the server already on that port is unaffected."""

from __future__ import annotations

import httpx
import pytest

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer, ServerOptions


async def test_busy_ports_fail_start_and_leave_the_first_server_alone() -> None:
    async with BridgeServer(demo_agent(), ServerOptions(port=0, grpc_port=0)) as first:
        busy_http = ServerOptions(port=first.http_port, grpc_port=None)
        with pytest.raises(OSError):
            await BridgeServer(demo_agent(), busy_http).start()
        assert first.grpc_port is not None
        busy_grpc = ServerOptions(port=0, grpc_port=first.grpc_port)
        second = BridgeServer(demo_agent(), busy_grpc)
        with pytest.raises(OSError, match="gRPC"):
            await second.start()
        async with httpx.AsyncClient() as http:  # the second's HTTP port was released
            with pytest.raises(httpx.ConnectError):
                await http.get(f"http://127.0.0.1:{second.http_port}/.well-known/agent.json")
            card = await http.get(first.card_url)
        assert card.status_code == 200
