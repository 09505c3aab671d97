"""Fixtures every test folder can use to stay independent of the tests running beside it
in other pytest-xdist workers (``docs/testing.md``): a PostgreSQL database and a Redis
server of the test's own. Free ports and locks are in ``parallel.py``."""

from __future__ import annotations

import sys
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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup`` pytest-xdist suffixes each grouped test's id with its
    group in the worker, and the scheduler keeps a group in one worker by that suffix.
    Should a pytest or pytest-xdist release break it, fail the run rather than let the
    groups (a module sharing one server, one browser at a time) silently run apart."""
    if not getattr(config.option, "loadgroup", False):
        return
    lost = [i.nodeid for i in items if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
    if lost:
        why = (
            f"--dist loadgroup did not group {lost[0]} (and {len(lost) - 1} more): "
            "this pytest / pytest-xdist pair cannot keep xdist_group tests together"
        )
        sys.stderr.write(f"\n{why}\n")  # a worker's exception reaches the terminal as a crash
        raise pytest.UsageError(why)
