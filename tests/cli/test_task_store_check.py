"""A task store that cannot be used stops ``serve`` at start with one line and exit 2,
instead of a server that loses every task (or a traceback)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trpc_bridge.cli import app


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:////no-such-folder-xyz/tasks.db", "unable to open database file"),
        ("sqlite:///relative.db", "is a relative path (three slashes)"),
        (
            "sqlite:///relative.db",
            f"absolute path with four, e.g. sqlite:///{Path.cwd()}/relative.db",
        ),
        ("sqlite://", "is a relative path"),
        ("mysql://user:secret@db.example/tasks", "unsupported task store"),
        ("sqlite+pysqlite:////tmp/x.db", "driver 'pysqlite' is not supported"),
        ("postgresql://bridge:secret@127.0.0.1:{port}/tasks", "is not usable"),
    ],
)
def test_unusable_task_store_is_one_line_and_exit_2(url: str, expected: str) -> None:
    url = url.format(port=_closed_port())
    result = CliRunner().invoke(
        app, ["serve", "--port", "0", "--grpc-port", "-1", "--task-store", url]
    )
    assert result.exit_code == 2, result.output
    assert expected in result.output
    assert "Traceback" not in result.output
    assert "secret" not in result.output  # the password never reaches a log
    assert len(result.output.strip().splitlines()) == 1


def test_proxy_checks_the_store_too(tmp_path: Path) -> None:
    from trpc_bridge.server import BridgeServer  # noqa: F401  (import cost outside the timing)

    result = CliRunner().invoke(
        app,
        ["proxy", "--upstream", "http://127.0.0.1:1", "--task-store", "mysql://x@y/z"],
    )
    assert result.exit_code != 0
    assert "Traceback" not in result.output


def test_help_shows_an_absolute_sqlite_path() -> None:
    result = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "240"})
    assert "sqlite:////abs/path/tasks.db" in result.output
