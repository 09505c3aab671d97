"""The operations the E2A golden vectors (``tests/vectors/E*.json``) exercise, each a
function from the vector's ``input`` to the JSON its ``expect`` must equal.

Records built during an operation get deterministic ids (``r0``, ``r1``, …) and one fixed
clock, so a vector pins the whole output.
"""

from __future__ import annotations

import itertools
from typing import Any

from trpc_bridge.codecs.e2a import (
    E2AEnvelope,
    E2AEventEncoder,
    E2AResponse,
    ResponseSequencer,
    check_stream,
    e2a_response_to_a2a_stream_payload,
    e2a_response_to_acp_jsonrpc_response,
    e2a_response_to_acp_notification,
    e2a_response_to_agent_event,
    envelope_from_a2a_send_message,
    envelope_from_acp_jsonrpc,
    envelope_to_acp_jsonrpc_call,
    envelope_to_agent_request,
    legacy_wire,
    merge_params_to_acp_prompt,
    response_from_acp_jsonrpc_response,
    response_from_acp_session_update,
    with_legacy_wire,
)
from trpc_bridge.events import AgentEvent

NOW = "2026-03-29T12:00:00+00:00"


def _sequencer(envelope: dict[str, Any]) -> ResponseSequencer:
    counter = itertools.count()
    return ResponseSequencer(
        E2AEnvelope.from_dict(envelope), new_id=lambda: f"r{next(counter)}", clock=lambda: NOW
    )


def envelope(data: Any) -> Any:
    return E2AEnvelope.from_dict(data).to_dict()


def response_stream(data: Any) -> Any:
    responses = [E2AResponse.from_dict(item) for item in data]
    check_stream(responses)
    return [r.to_dict() for r in responses]


def acp_in(data: Any) -> Any:
    env = envelope_from_acp_jsonrpc(
        data["message"],
        request_id=data.get("request_id"),
        user_id=data.get("user_id"),
        clock=lambda: NOW,
    )
    return env.to_dict()


def acp_call(data: Any) -> Any:
    return envelope_to_acp_jsonrpc_call(E2AEnvelope.from_dict(data))


def merge(data: Any) -> Any:
    return merge_params_to_acp_prompt(E2AEnvelope.from_dict(data))


def a2a_in(data: Any) -> Any:
    env = envelope_from_a2a_send_message(
        data["params"],
        method=data.get("method", "SendMessage"),
        jsonrpc_id=data.get("jsonrpc_id"),
        request_id=data.get("request_id"),
        user_id=data.get("user_id"),
        clock=lambda: NOW,
    )
    return env.to_dict()


def a2a_out(data: Any) -> Any:
    return e2a_response_to_a2a_stream_payload(E2AResponse.from_dict(data))


def legacy_in(data: Any) -> Any:
    """A record read: what it says (its ACP answer), and the legacy payload it carries."""
    response = E2AResponse.from_dict(data)
    found = legacy_wire(response)
    return {
        "record": response.to_dict(),
        "answer": e2a_response_to_acp_jsonrpc_response(response),
        "legacy": None if found is None else {"kind": found[0], "payload": found[1]},
    }


def legacy_out(data: Any) -> Any:
    response = E2AResponse.from_dict(data["record"])
    return with_legacy_wire(response, data["legacy"], chunk=data["chunk"]).to_dict()


def acp_out(data: Any) -> Any:
    response = E2AResponse.from_dict(data)
    return {
        "notification": e2a_response_to_acp_notification(response),
        "answer": e2a_response_to_acp_jsonrpc_response(response),
    }


def events(data: Any) -> Any:
    encoder = E2AEventEncoder(_sequencer(data["envelope"]))
    out = []
    for raw in data["events"]:
        out += encoder.encode(AgentEvent.model_validate(raw))
    out += encoder.cancel() if data.get("cancel") else encoder.close()
    check_stream(out)
    return [r.to_dict() for r in out]


def decode(data: Any) -> Any:
    out = []
    for item in data:
        event = e2a_response_to_agent_event(E2AResponse.from_dict(item))
        out.append(
            None
            if event is None
            else event.model_dump(
                mode="json", exclude_defaults=True, exclude={"event_id", "timestamp"}
            )
        )
    return out


def agent_request(data: Any) -> Any:
    request = envelope_to_agent_request(E2AEnvelope.from_dict(data))
    return request.model_dump(mode="json", exclude_defaults=True)


def acp_agent(data: Any) -> Any:
    """An ACP agent's notifications and answer, read as one request's records."""
    sequencer = _sequencer(data["envelope"])
    out = [response_from_acp_session_update(n, sequencer) for n in data["notifications"]]
    out.append(response_from_acp_jsonrpc_response(data["answer"], sequencer))
    check_stream(out)
    return [r.to_dict() for r in out]


OPS = {
    name: globals()[name]
    for name in (
        "envelope",
        "response_stream",
        "acp_in",
        "acp_call",
        "merge",
        "a2a_in",
        "a2a_out",
        "acp_out",
        "events",
        "decode",
        "agent_request",
        "acp_agent",
        "legacy_in",
        "legacy_out",
    )
}
