"""A bounded atheris run over every fuzz target, part of ``make test``: a fixed number of
inputs, a memory limit, a per-input time limit; any crash fails the test with its input
(libFuzzer saves it as ``crash-*`` in the corpus folder)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from fuzz_targets import BYTE_SEEDS, TARGETS, json_seeds

HARNESS = Path(__file__).with_name("atheris_run.py")
RUNS = 40_000
RSS_LIMIT_MB = 1024


def _seed(corpus: Path) -> None:
    """Real inputs for each target: vector frames for the frame decoders, the same
    wrapped in a JSON-RPC request for the byte parsers, and the byte seeds."""
    for index, target in enumerate(TARGETS):
        for n, seed in enumerate(json_seeds()):
            value = (
                seed
                if target.json
                else {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "message/send",
                    "params": {"message": seed},
                }
            )
            (corpus / f"seed-{index}-{n}").write_bytes(bytes([index]) + json.dumps(value).encode())
        if not target.json:
            for n, line in enumerate(BYTE_SEEDS):
                (corpus / f"line-{index}-{n}").write_bytes(bytes([index]) + line)


def test_bounded_atheris_run(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _seed(corpus)
    run = subprocess.run(
        [
            sys.executable,
            str(HARNESS),
            f"-runs={RUNS}",
            "-max_len=4096",
            f"-rss_limit_mb={RSS_LIMIT_MB}",
            "-timeout=30",
            f"-artifact_prefix={tmp_path}/",
            str(corpus),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    crashes = sorted(p.name for p in tmp_path.glob("crash-*"))
    assert run.returncode == 0, (crashes, run.stderr[-4000:])
    # libFuzzer treats -runs as a lower bound it checks between batches of mutations, so
    # the total it prints can run past it (CI printed 41183 for 40000); fewer means the
    # run ended early.
    done = re.search(r"^Done (\d+) runs", run.stderr, re.MULTILINE)
    assert done is not None, run.stderr[-4000:]
    assert int(done.group(1)) >= RUNS
