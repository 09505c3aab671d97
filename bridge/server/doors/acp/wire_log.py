"""The JSONL wire log of E2A records (docs/specs/e2a.md §12.7): one record per line, secrets masked.

Every response line carries request_id, response_id, sequence, is_final, status,
response_kind and timestamp, so a log can be searched by request and replayed in order
(``E2AResponse.from_dict`` reads each line back). Records that break the §12.3 rules
(sequence, one final) are still written, with a warning in the process log: the wire log
is for finding such faults, not for hiding them.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TextIO

from trpc_bridge.codecs.e2a import E2AResponse, E2ARuleError, StreamChecker, log_line

log = logging.getLogger(__name__)


class E2AWireLog:
    """Appends records to ``path`` (created owner-only: it holds conversations)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._file: TextIO = os.fdopen(fd, "a", encoding="utf-8")
        self._checker = StreamChecker()

    def write(self, response: E2AResponse) -> None:
        try:
            self._checker.check(response)
        except E2ARuleError as exc:
            log.warning("E2A wire log: %s", exc)
        # One flush per line: a log read while the process runs (or after it died)
        # holds every record written so far.
        self._file.write(log_line(response) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> E2AWireLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
