"""Secrets out of logs (docs/specs/e2a.md §12.7, §13), and the JSONL wire-log line.

:func:`redacted` masks every value held under a secret-bearing key, at any depth:
``bearer_token`` first of all, and the usual credential headers and fields (matched
without regard to case, ``-`` and ``_``). A ``*_ref`` field (``api_key_ref``,
``credential_ref``) names a secret kept elsewhere and is left as it is.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from trpc_bridge.codecs.e2a.models import E2AEnvelope, E2AResponse

MASK = "[redacted]"

_SECRET_KEYS = frozenset(
    {
        "bearertoken",
        "authorization",
        "proxyauthorization",
        "cookie",
        "setcookie",
        "xapikey",
        "apikey",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "clientsecret",
        "password",
        "secret",
    }
)


@functools.lru_cache(maxsize=4096)  # the same few keys come back on every record
def is_secret_key(key: str) -> bool:
    return key.lower().replace("-", "").replace("_", "") in _SECRET_KEYS


def redacted(value: Any) -> Any:
    """A copy of ``value`` (JSON-like) with every secret-bearing value masked."""
    if isinstance(value, dict):
        return {
            k: (MASK if isinstance(k, str) and is_secret_key(k) and v is not None else redacted(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    return value


def log_line(record: E2AResponse | E2AEnvelope) -> str:
    """One compact JSON line for a wire log: the whole record, secrets masked. A response
    line carries every L1 field (request_id, response_id, sequence, is_final, status,
    response_kind, timestamp), so a log can be searched and replayed by ``sequence``."""
    return json.dumps(redacted(record.to_dict()), ensure_ascii=False, separators=(",", ":"))
