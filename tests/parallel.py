"""What a test needs to run beside other tests: `make test` runs the suite in pytest-xdist
workers, each a process of its own, and other checkouts may run theirs on the same machine
(the rules: ``docs/testing.md``).

- ports: bind port 0 and read the port back (``serve --port 0`` prints its URLs); where a
  program must be told its port up front, :func:`free_port`, and retry when it is taken;
- files: ``tmp_path`` (per test, under the worker's own temporary folder); a shared output
  in the tree (a Go binary under ``interop/``) is written under :func:`exclusive`;
- databases: the ``postgres_url`` and ``redis_url`` fixtures of ``tests/conftest.py``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ROOT / "build" / "locks"


def worker_id() -> str:
    """``gw0``, ``gw1``, … in a pytest-xdist worker; ``main`` otherwise."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on at this moment. Another process may take it before
    it is used: prefer port 0 where the program reports the port it got."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def refused_port(port: int = 0, host: str = "127.0.0.1") -> Iterator[int]:
    """A TCP port (any free one, or ``port``: a server's just closed) that refuses
    connections while the block runs: bound by a socket that never listens, so no other
    server (another test's, a freed port handed out again) can take it."""
    with socket.socket() as holder:
        if port:
            # A closed server's port may still have connections in TIME_WAIT. Only then:
            # with SO_REUSEADDR another socket that sets it may bind the port too.
            holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind((host, port))
        yield int(holder.getsockname()[1])


@contextlib.contextmanager
def exclusive(name: str) -> Iterator[None]:
    """Hold the lock ``name`` of this checkout (a file under ``build/locks``) while
    writing an output that every worker uses, so that one writes it while the others
    wait (and then find it up to date)."""
    LOCKS.mkdir(parents=True, exist_ok=True)
    with (LOCKS / f"{name}.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
