from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import db_servers
import pytest

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer


@pytest.fixture
async def demo_server() -> AsyncIterator[BridgeServer]:
    async with BridgeServer(demo_agent()) as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def task_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database a restarted server can find its tasks in: a SQLite file, or a real
    PostgreSQL server on loopback."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'tasks.db'}"
        return
    if reason := db_servers.unavailable():
        pytest.skip(reason)
    with db_servers.postgres_server() as url:
        yield url
