"""The JSONL wire log: one record per line, replayable, secrets masked, owner-only."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path

import pytest

from trpc_bridge.codecs.e2a import (
    E2AEnvelope,
    E2AEventEncoder,
    E2AResponse,
    ResponseSequencer,
    check_stream,
)
from trpc_bridge.events import AgentEvent
from trpc_bridge.server.doors.acp.wire_log import E2AWireLog

SECRET = "tok-5ecret"


def test_lines_replay_in_order_without_secrets(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    envelope = E2AEnvelope(request_id="req-1", session_id="s1", auth={"bearer_token": SECRET})
    encoder = E2AEventEncoder(ResponseSequencer(envelope))
    run = [AgentEvent.text_delta("hel", "c1"), AgentEvent.text_delta("lo", "c1")]
    records = [r for e in run for r in encoder.encode(e)] + encoder.close()
    with E2AWireLog(path) as wire:
        for record in records:
            wire.write(record)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    lines = path.read_text().splitlines()
    assert len(lines) == 3
    replayed = [E2AResponse.from_dict(json.loads(line)) for line in lines]
    check_stream(replayed)
    for line in lines:
        entry = json.loads(line)
        for key in (
            "request_id",
            "response_id",
            "sequence",
            "is_final",
            "response_kind",
            "timestamp",
        ):
            assert key in entry
    assert SECRET not in path.read_text()


def test_a_record_that_breaks_the_rules_is_logged_and_warned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seq = ResponseSequencer(request_id="req-2")
    final = seq.complete({})
    with E2AWireLog(tmp_path / "w.jsonl") as wire, caplog.at_level(logging.WARNING):
        wire.write(final)
        wire.write(final.model_copy(update={"metadata": {"password": SECRET}}))
    text = (tmp_path / "w.jsonl").read_text()
    assert len(text.splitlines()) == 2 and SECRET not in text
    assert "after the final one" in caplog.text
