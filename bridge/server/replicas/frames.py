"""A stream frame as the bytes replicas share: the A2A 1.0 ``StreamResponse`` protobuf that
the journal's event table and both fan-out backends store and send."""

from __future__ import annotations

from a2a.types import StreamResponse
from a2a.utils.proto_utils import to_stream_response

from trpc_bridge.codecs.encoding import StreamFrame


def pack(frame: StreamFrame) -> bytes:
    data: bytes = to_stream_response(frame).SerializeToString()
    return data


def unpack(data: bytes) -> StreamFrame:
    response = StreamResponse.FromString(data)
    kind = response.WhichOneof("payload")
    frame: StreamFrame
    if kind == "status_update":
        frame = response.status_update
    elif kind == "artifact_update":
        frame = response.artifact_update
    else:
        frame = response.message
    return frame
