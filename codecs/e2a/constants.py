"""E2A vocabulary (docs/specs/e2a.md §4, §6, §12): versions, provenance, response kinds and
statuses.

ACP method and ``sessionUpdate`` names are not repeated here: they come from the
``agent-client-protocol`` package (``acp.meta`` and the schema's discriminators), so a
newer ACP schema brings its names with it.
"""

from __future__ import annotations

from typing import Final

#: The E2A version this bridge writes. Reading accepts any ``1.x`` (same major).
E2A_PROTOCOL_VERSION: Final = "1.0"

SOURCE_E2A: Final = "e2a"
SOURCE_ACP: Final = "acp"
SOURCE_A2A: Final = "a2a"

STATUS_SUCCEEDED: Final = "succeeded"
STATUS_FAILED: Final = "failed"
STATUS_IN_PROGRESS: Final = "in_progress"
RESPONSE_STATUSES: Final = frozenset({STATUS_SUCCEEDED, STATUS_FAILED, STATUS_IN_PROGRESS})

KIND_COMPLETE: Final = "e2a.complete"
KIND_CHUNK: Final = "e2a.chunk"
KIND_ERROR: Final = "e2a.error"
KIND_ACP_SESSION_UPDATE: Final = "acp.session_update"
KIND_ACP_PROMPT_RESULT: Final = "acp.prompt_result"
KIND_ACP_JSONRPC_ERROR: Final = "acp.jsonrpc_error"
KIND_A2A_TASK: Final = "a2a.task"
KIND_A2A_MESSAGE: Final = "a2a.message"
KIND_A2A_STREAM_EVENT: Final = "a2a.stream_event"
KIND_EXT: Final = "ext"

DELTA_TEXT: Final = "text"
DELTA_REASONING: Final = "reasoning"
DELTA_TOOL: Final = "tool"
DELTA_CUSTOM: Final = "custom"
DELTA_KINDS: Final = frozenset({DELTA_TEXT, DELTA_REASONING, DELTA_TOOL, DELTA_CUSTOM})

#: ``a2a.stream_event`` branches and the key each one has in A2A 1.0 ``StreamResponse`` JSON.
A2A_STREAM_BRANCHES: Final = {
    "task": "task",
    "message": "message",
    "status_update": "statusUpdate",
    "artifact_update": "artifactUpdate",
}

#: ``e2a.error`` code of a run the caller cancelled (ACP: ``stopReason: cancelled``).
ERROR_CANCELLED: Final = "cancelled"

#: ``method`` of an extension call (docs/specs/e2a.md §4.4): its own name is in ``ext_method``.
METHOD_EXT: Final = "ext"
#: ACP names its extension methods (and notifications) with a leading underscore.
ACP_EXTENSION_PREFIX: Final = "_"

#: The ACP method whose params :func:`merge_params_to_acp_prompt` completes.
ACP_SESSION_PROMPT: Final = "session/prompt"
ACP_SESSION_UPDATE: Final = "session/update"

# ``body.delta.type`` of structured chunks (this bridge's convention; E2A leaves the
# shape of a ``tool`` / ``custom`` delta open).
TOOL_CALL: Final = "tool_call"  # {type, id, name, arguments: JSON text as the model wrote it}
TOOL_RESULT: Final = "tool_result"  # {type, id, name, content: text}
CUSTOM_CODE: Final = "code"  # {type, id, code}
CUSTOM_CODE_RESULT: Final = "code_result"  # {type, id, output}
CUSTOM_STATE: Final = "state_delta"  # {type, state_delta: {key: base64 | null}}
CUSTOM_ERROR: Final = "error"  # {type, error_type, message}: an error that does not end the run
