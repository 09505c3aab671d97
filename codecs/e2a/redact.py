"""The JSONL wire-log line of an E2A record (docs/specs/e2a.md §12.7), secrets masked by
the bridge's one redaction policy (:mod:`trpc_bridge.redaction`): values under
secret-bearing keys (``bearer_token`` first of all) and secrets in every string.
"""

from __future__ import annotations

import json

from trpc_bridge.codecs.e2a.models import E2AEnvelope, E2AResponse
from trpc_bridge.redaction import current


def log_line(record: E2AResponse | E2AEnvelope) -> str:
    """One compact JSON line for a wire log: the whole record, secrets masked. A response
    line carries every L1 field (request_id, response_id, sequence, is_final, status,
    response_kind, timestamp), so a log can be searched and replayed by ``sequence``."""
    return json.dumps(current().value(record.to_dict()), ensure_ascii=False, separators=(",", ":"))
