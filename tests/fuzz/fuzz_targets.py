"""Every decoder and request parser that reads what a peer sent, as fuzz targets.

The one list both fuzzers read: the hypothesis properties (``test_fuzz_properties.py``)
and the bounded atheris run (``atheris_run.py``, started by ``test_atheris_run.py``).
The invariant is the same for every target: for any input it returns or raises one of
its ``typed`` errors, never anything else, in bounded memory.

**Adding a parser** (a new wire, e.g. the tfrs overlay): append a
:class:`FuzzTarget` to :data:`TARGETS` — a name, a function of the raw input, the
exceptions it may raise, and ``json=True`` when it reads an already-parsed JSON value
(a frame) rather than bytes. Nothing else needs editing; give it seeds in
:func:`json_seeds` if real inputs exist (vectors). Inputs that once went unanswered or
crashed a reader belong in :data:`BYTE_SEEDS`: both fuzzers try every byte target on
them and mutate from them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import a2a.client  # noqa: F401  (a2a-sdk's import order: see bridge/server/app.py)
from a2a.compat.v0_3 import a2a_v0_3_pb2
from a2a.types import SendMessageRequest
from ag_ui.core import RunAgentInput
from pydantic import ValidationError
from vector_files import VECTORS

from trpc_bridge.client.errors import RemoteCallError
from trpc_bridge.client.jsonrpc import stream_result
from trpc_bridge.codecs.agui.request import request_from_run_input
from trpc_bridge.codecs.e2a.a2a import envelope_from_a2a_send_message
from trpc_bridge.codecs.e2a.acp_inbound import envelope_from_acp_jsonrpc
from trpc_bridge.codecs.e2a.errors import E2AError
from trpc_bridge.codecs.e2a.models import E2AEnvelope, E2AResponse
from trpc_bridge.codecs.errors import CodecError
from trpc_bridge.codecs.tfrs import ProgressConsumer
from trpc_bridge.codecs.tfrs.envelope import parse_envelope
from trpc_bridge.codecs.trpc.decode import StreamDecoder, decode_result
from trpc_bridge.json_body import BodyError, read_json
from trpc_bridge.server.a2a.grpc_screen import decode_request
from trpc_bridge.server.a2a.jsonrpc_request import JsonRpcFault, parse_jsonrpc
from trpc_bridge.server.doors.acp.jsonrpc_lines import LineFault, read_message


@dataclass(frozen=True)
class FuzzTarget:
    name: str
    run: Callable[[Any], object]
    #: The errors the target may raise for bad input (anything else is a bug).
    typed: tuple[type[BaseException], ...] = ()
    #: True: ``run`` takes a parsed JSON value; False: raw bytes.
    json: bool = False


def _jsonrpc(body: bytes) -> object:
    # Never raises: every body is a call, a notification or a fault with a JSON answer.
    for header in (None, "1.0"):
        parsed = parse_jsonrpc(body, header)
        if isinstance(parsed, JsonRpcFault):
            json.loads(parsed.body())
    return parsed


def _acp_line(line: bytes) -> object:
    # Never raises: a message, or the fault it is answered with (a JSON answer).
    message = read_message(line)
    if isinstance(message, LineFault):
        json.dumps(message.response())
    return message


def _agui(body: bytes) -> object:
    return request_from_run_input(RunAgentInput.model_validate(read_json(body)))


def _grpc(raw: bytes) -> object:
    # Never raises: a request, or the reason it is not one (INVALID_ARGUMENT).
    for message_type in (SendMessageRequest, a2a_v0_3_pb2.SendMessageRequest):
        decode_request(message_type.FromString, raw, "/fuzz/SendMessage")
    return None


def _stream(frames: Any) -> object:
    decoder = StreamDecoder()
    for frame in frames if isinstance(frames, list) else [frames]:
        try:
            decoder.feed(frame)
        except CodecError:
            continue  # a bad frame is skipped; the decoder must go on
    return None


def _progress(result: Any) -> object:
    # Never raises: anything unreadable is no progress (tfrs progress is best effort).
    return ProgressConsumer().feed(result)


def _client_frame(body: bytes) -> object:
    return stream_result(body, "message/stream")


TARGETS: list[FuzzTarget] = [
    FuzzTarget("JSON-RPC request body (0.3 and 1.0)", _jsonrpc),
    FuzzTarget("strict JSON body (REST, AG-UI)", read_json, (BodyError,)),
    FuzzTarget("ACP message line (trpc-bridge acp)", _acp_line),
    FuzzTarget("AG-UI RunAgentInput", _agui, (BodyError, ValidationError)),
    FuzzTarget("gRPC SendMessageRequest (1.0 and 0.3)", _grpc),
    FuzzTarget("client SSE frame (remote server's stream)", _client_frame, (RemoteCallError,)),
    FuzzTarget("A2A stream frames (0.3 and 1.0 wires)", _stream, json=True),
    FuzzTarget("A2A unary result (0.3 and 1.0 wires)", decode_result, (CodecError,), json=True),
    FuzzTarget("tfrs envelope (the metadata value)", parse_envelope, json=True),
    FuzzTarget("tfrs progress in an A2A result (0.3 and 1.0)", _progress, json=True),
    FuzzTarget("E2A envelope", E2AEnvelope.from_dict, (E2AError,), json=True),
    FuzzTarget("E2A response", E2AResponse.from_dict, (E2AError,), json=True),
    FuzzTarget("ACP JSON-RPC call → E2A", envelope_from_acp_jsonrpc, (E2AError,), json=True),
    FuzzTarget("A2A SendMessage → E2A", envelope_from_a2a_send_message, (E2AError,), json=True),
]


#: Lines the ACP door once left unanswered (a client waiting on their id waited for ever),
#: and other inputs that broke a reader: tried on every byte target.
BYTE_SEEDS: list[bytes] = [
    b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"\xff"}}',  # not UTF-8
    b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","par',  # truncated
    b'{"jsonrpc":"2.0","id":3,"params":' + b"[" * 10_000 + b"]" * 10_000 + b"}",  # too deep
    b'{"jsonrpc":"2.0","id":4,"method":"x","params":{"n":NaN}}',
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}',
    b"[]",
    b"{}",
]


def json_seeds() -> Iterator[Any]:
    """Real frames and results from the golden vectors (both wires), to mutate from."""
    for path in sorted(VECTORS.glob("*.json")):
        vector = json.loads(path.read_text())
        value = vector.get("input") if vector.get("direction") == "decode" else vector.get("expect")
        if isinstance(value, list):
            yield from (v for v in value if isinstance(v, dict))
        elif isinstance(value, dict):
            yield value
