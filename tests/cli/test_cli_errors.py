"""Serving commands that cannot serve say why in one line (naming the port or the
upstream) and exit non-zero: no traceback, no "Event loop is closed" noise at exit."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

CLI = Path(sys.executable).parent / "trpc-bridge"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *args], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )


def _one_line(result: subprocess.CompletedProcess[str], code: int) -> str:
    """The process's stderr, checked to be exactly one ``error:`` line."""
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A loopback port some other program listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--port", "99999"], "--port 99999 is not a TCP port (0-65535"),
        (["--port", "-5"], "--port -5 is not a TCP port"),
        (["--port", "0", "--grpc-port", "70000"], "--grpc-port 70000 is not a TCP port"),
        (["--negotiation", "sometimes"], "unknown negotiation 'sometimes'"),
        (["--keep-tasks", "0"], "--keep-tasks must be above 0, not 0"),
        (["--keep-task-mb", "-1"], "--keep-task-mb must be above 0, not -1"),
    ],
)
def test_flags_that_cannot_be_served(flags: list[str], message: str) -> None:
    assert message in _one_line(_run("serve", *flags), 2)


def test_the_same_port_for_http_and_grpc() -> None:
    line = _one_line(_run("serve", "--port", "18999", "--grpc-port", "18999"), 2)
    assert line == "error: --port and --grpc-port are both 18999: HTTP and gRPC need a port each"


def test_http_port_in_use(busy_port: int) -> None:
    line = _one_line(_run("serve", "--port", str(busy_port), "--grpc-port", "0"), 1)
    assert line == f"error: cannot listen on 127.0.0.1:{busy_port} (HTTP): Address already in use"


def test_grpc_port_in_use(busy_port: int) -> None:
    line = _one_line(_run("serve", "--port", "0", "--grpc-port", str(busy_port)), 1)
    assert line == f"error: cannot listen on 127.0.0.1:{busy_port} (gRPC): Address already in use"


def test_proxy_with_an_unreachable_upstream() -> None:
    line = _one_line(_run("proxy", "--upstream", "http://127.0.0.1:1/", "--port", "0"), 1)
    assert line.startswith("error: cannot proxy http://127.0.0.1:1/: cannot reach")
