"""E2A (``docs/specs/e2a.md``): a normalised envelope for everything that reaches an agent
(:class:`E2AEnvelope`) and for every record that comes back (:class:`E2AResponse`), with
adapters from ACP and A2A and projections back to them.

``docs/specs/e2a.md §x`` in this package names a section of that page, which describes
E2A ``1.0`` in the bridge's words with the section numbers of the original, and lists
where the bridge departs from it and why.

Modules: ``models`` (the records, ``from_dict`` / ``to_dict`` with the legacy keys),
``bodies`` and ``rules`` (what a record and a stream must satisfy), ``redact`` (the JSONL
wire-log line, secrets masked), ``acp_inbound`` / ``acp_outbound`` / ``acp_schema`` (ACP, typed by
the ``agent-client-protocol`` package), ``a2a`` (A2A SendMessage in, StreamResponse out),
``request`` (envelope → :class:`~trpc_bridge.events.AgentRequest`), ``agent_events``
(:class:`~trpc_bridge.events.AgentEvent` ⇄ responses) and ``legacy_wire`` (the legacy
``AgentResponse`` / ``AgentChunk`` JSON a record may carry). All pure: no I/O.
"""

from trpc_bridge.codecs.e2a.a2a import (
    e2a_response_to_a2a_stream_payload,
    envelope_from_a2a_send_message,
)
from trpc_bridge.codecs.e2a.acp_inbound import (
    envelope_from_acp_jsonrpc,
    response_from_acp_jsonrpc_response,
    response_from_acp_session_update,
)
from trpc_bridge.codecs.e2a.acp_outbound import (
    e2a_response_to_acp_jsonrpc_response,
    e2a_response_to_acp_notification,
    e2a_response_to_acp_update,
    envelope_to_acp_jsonrpc_call,
    merge_params_to_acp_prompt,
)
from trpc_bridge.codecs.e2a.agent_events import E2AEventEncoder, e2a_response_to_agent_event
from trpc_bridge.codecs.e2a.constants import E2A_PROTOCOL_VERSION
from trpc_bridge.codecs.e2a.errors import E2AError, E2AFormatError, E2ARuleError, E2AVersionError
from trpc_bridge.codecs.e2a.legacy_wire import (
    LEGACY_AGENT_CHUNK_KEY,
    LEGACY_AGENT_RESPONSE_KEY,
    legacy_wire,
    with_legacy_wire,
)
from trpc_bridge.codecs.e2a.models import (
    E2AAuth,
    E2AEnvelope,
    E2AFileRef,
    E2AProvenance,
    E2AResponse,
)
from trpc_bridge.codecs.e2a.redact import log_line
from trpc_bridge.codecs.e2a.request import envelope_to_agent_request
from trpc_bridge.codecs.e2a.rules import ResponseSequencer, StreamChecker, check_stream

__all__ = [
    "E2A_PROTOCOL_VERSION",
    "LEGACY_AGENT_CHUNK_KEY",
    "LEGACY_AGENT_RESPONSE_KEY",
    "E2AAuth",
    "E2AEnvelope",
    "E2AError",
    "E2AEventEncoder",
    "E2AFileRef",
    "E2AFormatError",
    "E2AProvenance",
    "E2AResponse",
    "E2ARuleError",
    "E2AVersionError",
    "ResponseSequencer",
    "StreamChecker",
    "check_stream",
    "e2a_response_to_a2a_stream_payload",
    "e2a_response_to_acp_jsonrpc_response",
    "e2a_response_to_acp_notification",
    "e2a_response_to_acp_update",
    "e2a_response_to_agent_event",
    "envelope_from_a2a_send_message",
    "envelope_from_acp_jsonrpc",
    "envelope_to_acp_jsonrpc_call",
    "envelope_to_agent_request",
    "legacy_wire",
    "log_line",
    "merge_params_to_acp_prompt",
    "response_from_acp_jsonrpc_response",
    "response_from_acp_session_update",
    "with_legacy_wire",
]
