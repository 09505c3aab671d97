"""A pytest plugin loaded into the TCK's own run (``-p tck_outcomes``): it writes one JSON
line per TCK test with its transport, RFC 2119 level, outcome and skip/failure reason.

It runs inside the TCK's virtualenv, so it imports nothing but pytest. The TCK's JUnit
report names neither the level (a marker) nor, for the transport-specific modules, the
transport, which is why the outcome is taken here, where the item is at hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

_TRANSPORTS = ("jsonrpc", "http_json", "grpc")
_LEVELS = ("must", "should", "may")
_RECORDS = pytest.StashKey[list[dict[str, Any]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--outcomes", dest="tck_outcomes", default=None, help="JSON lines file")


def _transport(item: pytest.Item) -> str:
    """The transport a test exercises; ``any`` for transport-agnostic ones (agent card)."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("transport") in _TRANSPORTS:
        return str(callspec.params["transport"])
    for name in _TRANSPORTS:
        if item.get_closest_marker(name) is not None:
            return name
    return "any"


def _level(item: pytest.Item) -> str:
    return next((name for name in _LEVELS if item.get_closest_marker(name)), "none")


def _reason(report: pytest.TestReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    if hasattr(report, "wasxfail"):
        return str(report.wasxfail)
    if report.failed:
        lines = [line for line in report.longreprtext.splitlines() if line.startswith("E ")]
        return (lines[0] if lines else report.longreprtext.splitlines()[-1])[:400]
    return ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    # One record per test: its call, or the setup when the setup skipped or failed.
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if hasattr(report, "wasxfail"):
            result = "xfailed" if report.skipped else "xpassed"
        else:
            result = report.outcome
        item.config.stash.setdefault(_RECORDS, []).append(
            {
                "id": item.nodeid,
                "transport": _transport(item),
                "level": _level(item),
                "outcome": result,
                "reason": _reason(report),
            }
        )


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("tck_outcomes")
    if path:
        records = session.config.stash.get(_RECORDS, [])
        Path(path).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
