"""Fixtures every test folder can use to stay independent of the tests running beside it
in other pytest-xdist workers (``docs/testing.md``): a PostgreSQL database and a Redis
server of the test's own. Free ports and locks are in ``parallel.py``."""

from __future__ import annotations

from collections.abc import Iterator

import db_servers
import pytest


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[db_servers.Postgres]:
    """This worker's PostgreSQL cluster, started when a test first asks for a database.
    A test that stops or breaks its server starts its own with
    :func:`db_servers.postgres_cluster` instead."""
    if reason := db_servers.unavailable():
        pytest.skip(reason)
    with db_servers.postgres_cluster() as cluster:
        yield cluster


@pytest.fixture
def postgres_url(postgres_cluster: db_servers.Postgres) -> str:
    """The asyncpg URL of an empty database of this test's own."""
    return postgres_cluster.new_database()


@pytest.fixture
def redis_url() -> Iterator[str]:
    """A Redis server of this test's own (it starts in a tenth of a second)."""
    if reason := db_servers.redis_unavailable():
        pytest.skip(reason)
    with db_servers.redis_server() as url:
        yield url
