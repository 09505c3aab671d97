from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer


@pytest.fixture
async def demo_server() -> AsyncIterator[BridgeServer]:
    async with BridgeServer(demo_agent()) as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def task_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database a restarted server can find its tasks in: a SQLite file, or a database
    of its own on a real PostgreSQL server on loopback."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tasks.db'}"
    return str(request.getfixturevalue("postgres_url"))
