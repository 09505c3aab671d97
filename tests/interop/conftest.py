"""The interop matrix: fixtures that build the Go peer, and the report.

Every test of this folder records its cell (scenario, mode, wire, direction) through the
``cell`` marker; at the end of the session the matrix is printed and, when the whole
matrix ran (``make interop``), written to ``docs/interop-matrix.md``.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from framework_fixtures import bridges, framework_clients, framework_servers, go_servers
from frameworks import FRAMEWORK_LEGEND, versions
from peers import GOPEER, SKIP_NO_GO, build_agenthost, build_gopeer, go_available

REPORT = Path(__file__).resolve().parents[2] / "docs" / "interop-matrix.md"
# The frameworks matrix's session fixtures, shared by its test modules.
__all__ = ["bridges", "framework_clients", "framework_servers", "go_servers"]

_CELLS: dict[tuple[str, str], str] = {}  # (row, column) → pass | fail | n/a: reason
_TABLES: dict[str, str] = {}  # column → table ("frameworks"; default: by name)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "cell(row, column, table=None): the interop matrix cell a test fills"
    )


@pytest.fixture(scope="session")
def gopeer() -> Iterator[Path]:
    if not go_available():
        pytest.skip(SKIP_NO_GO)
    yield build_gopeer()


@pytest.fixture(scope="session")
def agenthost() -> Iterator[Path]:
    if not go_available():
        pytest.skip(SKIP_NO_GO)
    yield build_agenthost()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Record a test's cell. Under pytest-xdist this runs in the controller too, on the
    reports the workers send: the cell and its table travel in ``user_properties``."""
    properties = dict(report.user_properties)
    found = properties.get("cell")
    if not isinstance(found, tuple | list):
        return
    cell = (str(found[0]), str(found[1]))
    if properties.get("cell_table"):
        _TABLES[cell[1]] = str(properties["cell_table"])
    if report.when == "call" or report.outcome != "passed":
        if report.skipped and hasattr(report, "wasxfail"):
            _CELLS[cell] = "xfail"
        elif report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped"
            _CELLS[cell] = f"n/a ({str(reason).removeprefix('Skipped: ')})"
        else:
            _CELLS.setdefault(cell, "pass")
            if report.failed:
                _CELLS[cell] = "FAIL"


@pytest.fixture(autouse=True)
def _record_cell(request: pytest.FixtureRequest) -> None:
    marker = request.node.get_closest_marker("cell")
    if marker is not None:
        request.node.user_properties.append(("cell", (marker.args[0], marker.args[1])))
        if marker.kwargs.get("table"):
            request.node.user_properties.append(("cell_table", marker.kwargs["table"]))


def _cell(value: str, notes: dict[str, int]) -> str:
    if value.startswith("n/a ("):
        note = notes.setdefault(value[5:-1], len(notes) + 1)
        return f"n/a [{note}]"
    return value


def _table(columns: list[str], notes: dict[str, int], *, corner: str = "scenario / check") -> str:
    rows = sorted({row for row, column in _CELLS if column in columns})
    lines = [
        f"| {corner} | " + " | ".join(columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for row in rows:
        cells = [_cell(_CELLS.get((row, column), "—"), notes) for column in columns]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _transposed(columns: list[str], notes: dict[str, int]) -> str:
    """One line per direction, one column per scenario (the frameworks table is wide)."""
    scenarios = sorted({row for row, column in _CELLS if column in columns})
    lines = [
        "| direction | " + " | ".join(scenarios) + " |",
        "|---" * (len(scenarios) + 1) + "|",
    ]
    for column in columns:
        cells = [_cell(_CELLS.get((s, column), "—"), notes) for s in scenarios]
        lines.append(f"| {column} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _report() -> str:
    """The Go matrix (columns ending in the wire version), the Python frameworks' matrix
    and the other checks, with the reasons of n/a cells as numbered notes."""
    columns = sorted({column for _, column in _CELLS})
    frameworks = [c for c in columns if _TABLES.get(c) == "frameworks"]
    wire = [c for c in columns if c.endswith((" v0", " v1")) and c not in frameworks]
    other = [c for c in columns if c not in wire and c not in frameworks]
    notes: dict[str, int] = {}
    parts = []
    if wire:
        parts.append(_table(wire, notes))
    if frameworks:
        parts.append(
            "Agent frameworks (trpc-agent-python, Google ADK, ADK for TypeScript) and A2A "
            "SDKs (JavaScript, Java) with the bridge, and through `trpc-bridge proxy` with "
            "each other and with trpc-agent-go:"
        )
        parts.append(_transposed(frameworks, notes))
    if other:
        parts.append(
            "Other cross-language checks (AG-UI output, one trace across agents, identity, "
            "cancellation):"
        )
        parts.append(_table(other, notes))
    parts += [f"[{number}] {reason}" for reason, number in notes.items()]
    return "\n\n".join(parts)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _CELLS:
        return
    table = _report()
    terminalreporter.write_sep("=", "interop matrix")
    terminalreporter.write_line(table)
    if os.environ.get("INTEROP_REPORT") != "1":
        return
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(
        "# Interop matrix: trpc-a2a-bridge ⇄ trpc-agent-go, trpc-agent-python, Google ADK, "
        "the A2A JavaScript and Java SDKs, ADK for TypeScript\n\n"
        "How the matrix runs and what it checks: [interop.md](interop.md).\n\n"
        f"Written by `make interop` on {stamp} with the Go peer "
        f"`{GOPEER.relative_to(REPORT.parents[1])}` (trpc-agent-go, see interop/go/README.md) "
        "and the framework and SDK peers of `interop/python/`, `interop/js/`, "
        "`interop/java/` and `interop/adk-js/` (see their README.md):\n\n"
        f"{versions()}\n\n"
        "Columns: `go→py` = trpc-agent-go's `A2AAgent` calling the bridge server, compared "
        "event by event with the same call against trpc-agent-go's own server (ids "
        "normalised); `py→go` = the bridge's `RemoteAgent` calling trpc-agent-go's server, "
        "compared in content with the scenario script. `stream` / `unary` = "
        "`message/stream` / `message/send`; `v0` = A2A 0.2.x/0.3 JSON-RPC wire, "
        "`v1` = A2A 1.0 wire.\n\n"
        f"{FRAMEWORK_LEGEND}\n\n"
        f"{table}\n",
        encoding="utf-8",
    )
    terminalreporter.write_line(f"written to {REPORT}")
