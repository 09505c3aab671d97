"""How ``tck_run`` counts the TCK's outcomes (the lines `make conformance` prints)."""

from __future__ import annotations

from tck_run import tally


def _record(transport: str, level: str, outcome: str, reason: str = "") -> dict[str, str]:
    return {"id": "t", "transport": transport, "level": level, "outcome": outcome, "reason": reason}


def test_transport_agnostic_tests_count_on_every_transport() -> None:
    records = [
        _record("any", "must", "passed"),
        _record("jsonrpc", "must", "passed"),
        _record("grpc", "must", "failed", "boom"),
    ]
    tallies = tally(records)
    assert (tallies[("jsonrpc", "must")].passed, tallies[("jsonrpc", "must")].failed) == (2, 0)
    assert (tallies[("grpc", "must")].passed, tallies[("grpc", "must")].failed) == (1, 1)
    assert ("http_json", "must") not in tallies  # not declared: no line


def test_should_xfail_is_a_failure_and_skips_keep_their_reason() -> None:
    records = [
        _record("jsonrpc", "should", "xfailed", "no max-age"),
        _record("jsonrpc", "should", "skipped", "push not declared"),
        _record("jsonrpc", "should", "skipped", "push not declared"),
    ]
    counts = tally(records)[("jsonrpc", "should")]
    assert (counts.passed, counts.failed, counts.skipped) == (0, 1, 2)
    assert counts.reasons == {"push not declared": 2}
    assert "2× push not declared" in counts.line("jsonrpc", "should")
