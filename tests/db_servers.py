"""Throwaway database servers on loopback (PostgreSQL, Redis), for the task-store and
replica tests and benchmarks. Tests take them through the ``postgres_url`` and
``redis_url`` fixtures (``tests/conftest.py``): one PostgreSQL cluster per test worker,
a database per test.

Uses the machine's server binaries (``initdb`` / ``pg_ctl``, ``redis-server``; `make test`
installs Debian's packages when it runs as root); tests that need one skip, saying why,
where they are missing. PostgreSQL refuses to run as root, so under root the cluster is
created and run as the ``postgres`` system user.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from parallel import free_port


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def unavailable() -> str:
    """Why no server can be started here ("" when one can)."""
    if any(_binary(name) is None for name in ("initdb", "pg_ctl", "psql")):
        return "PostgreSQL server binaries (initdb, pg_ctl, psql) are not installed"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: cannot start PostgreSQL as another user"
    return ""


def _run(command: list[str]) -> None:
    subprocess.run(command, check=True, capture_output=True, timeout=120)


@dataclass
class Postgres:
    """A running cluster: its asyncpg URL (database ``postgres``), new databases in it,
    and stop / start for fault tests."""

    port: int
    _pg_ctl: list[str]
    _numbers: Iterator[int] = field(default_factory=itertools.count)

    @property
    def url(self) -> str:
        return self.database_url("postgres")

    def database_url(self, name: str) -> str:
        return f"postgresql+asyncpg://bridge@127.0.0.1:{self.port}/{name}"

    def new_database(self) -> str:
        """An empty database of its own (a test's); its asyncpg URL."""
        psql = _binary("psql")
        assert psql, unavailable()
        name = f"test_{next(self._numbers)}"
        _run([psql, "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "bridge",
              "-d", "postgres", "-c", f"CREATE DATABASE {name}"])  # fmt: skip
        return self.database_url(name)

    def stop(self) -> None:
        subprocess.run(
            [*self._pg_ctl, "-m", "immediate", "stop"], check=False, capture_output=True, timeout=60
        )

    def start(self) -> None:
        _run([*self._pg_ctl, "-w", "start"])


@contextlib.contextmanager
def postgres_cluster() -> Iterator[Postgres]:
    """Start a cluster with trust auth on a free loopback port; yield it."""
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    assert initdb and pg_ctl, unavailable()
    as_user: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bridge-pg-") as tmp:
        data = Path(tmp) / "data"
        if os.geteuid() == 0:
            shutil.chown(tmp, "postgres", "postgres")
            as_user = ["runuser", "-u", "postgres", "--"]
        _run([*as_user, initdb, "-D", str(data), "-A", "trust", "-U", "bridge"])
        # -l: the server's output goes to a file, not to pipes it would hold open.
        log = str(Path(tmp) / "server.log")
        for attempt in range(3):  # PostgreSQL needs its port up front: retry if taken
            port = free_port()
            options = f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1 -c fsync=off"
            control = [*as_user, pg_ctl, "-D", str(data), "-l", log, "-o", options]
            try:
                _run([*control, "-w", "start"])
                break
            except subprocess.CalledProcessError:
                if attempt == 2:
                    raise
        server = Postgres(port, control)
        try:
            yield server
        finally:
            server.stop()


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Start a cluster with trust auth on a free loopback port; yield its asyncpg URL."""
    with postgres_cluster() as server:
        yield server.url


def redis_unavailable() -> str:
    """Why no Redis server can be started here ("" when one can)."""
    return "" if shutil.which("redis-server") else "redis-server is not installed"


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A Redis server on a free loopback port, nothing persisted; yield its URL."""
    binary = shutil.which("redis-server")
    assert binary, redis_unavailable()
    for attempt in range(3):  # like PostgreSQL, it needs its port up front
        port = free_port()
        command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
        command += ["--appendonly", "no", "--protected-mode", "yes"]
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.05)
        if proc.poll() is None:
            break
        if attempt == 2:
            raise RuntimeError(f"redis-server did not start (exit {proc.returncode})")
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
