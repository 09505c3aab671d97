from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer


@pytest.fixture
async def demo_server() -> AsyncIterator[BridgeServer]:
    async with BridgeServer(demo_agent()) as server:
        yield server
