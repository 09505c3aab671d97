"""Wire vocabulary of trpc-agent-go's A2A dialect, and the small encodings shared by both
directions of the codec: the ``state_delta`` envelope and Go-compatible JSON text.

Values here are facts of the wire (``internal/a2a/a2a.go`` in trpc-agent-go); see
``docs/specs/trpc-interaction.md`` §0.4.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Mapping
from typing import Any

from trpc_bridge.events import ContentPartType, Usage

#: The interaction spec version this bridge speaks and declares.
INTERACTION_SPEC_VERSION = "0.1"
#: The agent-card extension that declares the trpc dialect.
CARD_EXTENSION_URI = "trpc-a2a-version"

# Request message metadata.
META_SPEC_VERSION = "interaction_spec_version"
META_INVOCATION_ID = "invocation_id"
META_USER_ID = "user_id"

# Response metadata (message / artifact-update event / status event).
META_OBJECT_TYPE = "object_type"
META_TAG = "tag"
META_RESPONSE_ID = "llm_response_id"
META_STATE_DELTA = "state_delta"
META_TASK_STATE = "task_state"
#: The bridge's own key (trpc-agent-go carries no usage on the A2A wire):
#: ``model.Usage``'s JSON fields, ``docs/specs/trpc-interaction.md`` §2.2.
META_USAGE = "usage"
USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")

# Structured error metadata.
META_ERROR_TYPE = "error_type"
META_ERROR_MESSAGE = "error_message"
META_ERROR_CODE = "error_code"
META_ERROR_PARAM = "error_param"
ERROR_KEYS = (META_ERROR_TYPE, META_ERROR_MESSAGE, META_ERROR_CODE, META_ERROR_PARAM)

# `submitted` status metadata written when ADK compatibility is on.
META_ADK_APP_NAME = "adk_app_name"
META_ADK_SESSION_ID = "adk_session_id"
META_ADK_USER_ID = "adk_user_id"

# Part metadata. ADK compatibility writes every part key twice: `k` and `adk_k`.
PART_TYPE = "type"
PART_THOUGHT = "thought"
ADK_PREFIX = "adk_"
PART_CONTENT_TYPE = "content_type"

# DataPart types.
FUNCTION_CALL = "function_call"
FUNCTION_RESPONSE = "function_response"
EXECUTABLE_CODE = "executable_code"
CODE_EXECUTION_RESULT = "code_execution_result"

# The text trpc-agent-go's default error handler sends instead of the real error.
DEFAULT_ERROR_TEXT = "An error occurred while processing your request."
# trpc's runner stores the last response id of a run under this state key.
STATE_LAST_RESPONSE_ID = "last_response_id"


# Bare formats trpc-agent-go recognises when a FilePart's mime type has no `type/` prefix.
_IMAGE_FORMATS = frozenset({"png", "jpg", "jpeg", "gif", "webp", "bmp", "tiff"})
_AUDIO_FORMATS = frozenset({"mp3", "wav", "mpeg", "mpga", "ogg", "flac", "m4a", "aac"})


def file_part_type(content_type: Any, mime_type: str, name: str) -> ContentPartType:
    """What a FilePart holds, decided as trpc-agent-go does: the ``content_type`` part
    metadata, else the mime type (``image/…``, ``audio/…`` or a bare format), else the
    legacy names ``image`` / ``audio``; a plain file otherwise."""
    if content_type in ("image", "audio", "file"):
        return content_type  # type: ignore[no-any-return]
    mime = mime_type.lower()
    if mime.startswith("image/") or mime in _IMAGE_FORMATS:
        return "image"
    if mime.startswith("audio/") or mime in _AUDIO_FORMATS:
        return "audio"
    if name == "image":
        return "image"
    if name == "audio":
        return "audio"
    return "file"


# --- state_delta envelope -------------------------------------------------------------


def encode_state_delta(delta: Mapping[str, bytes | None]) -> dict[str, dict[str, str]]:
    """``{key: {"encoding": "nil"}}`` for deletions, else ``{"encoding": "bytes",
    "payload": <std base64 with padding>}`` — keys sorted, as Go's map encoding does."""
    out: dict[str, dict[str, str]] = {}
    for key in sorted(delta):
        value = delta[key]
        if value is None:
            out[key] = {"encoding": "nil"}
        else:
            out[key] = {"encoding": "bytes", "payload": base64.b64encode(value).decode("ascii")}
    return out


def decode_state_delta(envelope: Any) -> dict[str, bytes | None]:
    """Inverse of :func:`encode_state_delta`. Malformed entries (unknown encoding, bad
    base64, non-object) are skipped, as trpc-agent-go's ``DecodeStateDeltaMetadata`` does."""
    if not envelope or not isinstance(envelope, Mapping):  # mostly absent: None
        return {}
    out: dict[str, bytes | None] = {}
    for key, entry in envelope.items():
        if not isinstance(entry, Mapping):
            continue
        encoding = entry.get("encoding")
        if encoding == "nil":
            out[str(key)] = None
        elif encoding == "bytes":
            payload = entry.get("payload", "")
            if not isinstance(payload, str):
                continue
            try:
                out[str(key)] = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                continue
    return out


# --- token usage --------------------------------------------------------------------------

#: Counts above this do not survive A2A 1.0's Struct (doubles) exactly.
_MAX_COUNT = 2**53


def encode_usage(usage: Usage) -> dict[str, int]:
    """``{"prompt_tokens", "completion_tokens", "total_tokens"}``, all three always (as
    ``model.Usage`` marshals them)."""
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }


def decode_usage(value: Any) -> Usage | None:
    """Inverse of :func:`encode_usage`; ``None`` for anything that is not an object of
    whole non-negative counts (a peer's malformed metadata is ignored, not an error).
    Counts may come as doubles (A2A 1.0's Struct); a missing one is 0."""
    if not isinstance(value, Mapping):
        return None
    counts: dict[str, int] = {}
    for key in USAGE_FIELDS:
        count = value.get(key, 0)
        if isinstance(count, bool) or not isinstance(count, int | float):
            return None
        if not (math.isfinite(count) and count == int(count) and 0 <= count <= _MAX_COUNT):
            return None
        counts[key] = int(count)
    return Usage(**counts)


# --- Go-compatible JSON ---------------------------------------------------------------

# Go's encoding/json escapes these even inside strings (HTMLEscape + JS line separators).
_GO_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def _go_number(value: float) -> Any:
    # Go decodes JSON numbers into float64 and prints integral values without a fraction.
    if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
        return int(value)
    return value


def _normalise(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float):
        return _go_number(value)
    if isinstance(value, Mapping):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(v) for v in value]
    return str(value)


def go_json(value: Any) -> str:
    """JSON text as Go's ``json.Marshal`` writes a decoded ``any``: compact, keys sorted,
    ``<``/``>``/``&`` escaped, other non-ASCII raw, integral numbers without ``.0``.

    trpc-agent-go's client re-serialises object-typed ``args`` / ``response`` this way.
    """
    text = json.dumps(_normalise(value), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.translate(_GO_ESCAPES)
