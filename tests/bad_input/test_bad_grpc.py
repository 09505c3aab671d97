"""Bad gRPC calls (A2A 1.0 ``lf.a2a.v1`` and 0.3 ``a2a.v1`` services on one port): each
gets exactly its status code and details, never UNKNOWN with a Python exception, while
another caller's stream runs."""

from __future__ import annotations

import struct

import grpc
import pytest
from a2a.types import (
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)

from trpc_bridge.server import BridgeServer

from .running_stream import LIMIT, RunningStream

# One server and one running stream for the module, checked by its last test: the module
# runs whole, in order, in one pytest-xdist worker.
pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.xdist_group("bad_input_grpc"),
]

V10 = "/lf.a2a.v1.A2AService/"
V03 = "/a2a.v1.A2AService/"


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field, written by hand (no SDK would send these)."""
    size, length = len(payload), b""
    while True:
        byte = size & 0x7F
        size >>= 7
        length += bytes([byte | (0x80 if size else 0)])
        if not size:
            break
    return bytes([number << 3 | 2]) + length + payload


def _send(message: bytes) -> bytes:
    """SendMessageRequest{message: <message>} (field 2; Message: id 1, parts 5)."""
    return _field(2, message)


def _text_message(text: bytes, message_id: bytes = b"m") -> bytes:
    return _field(1, message_id) + b"\x18\x01" + _field(5, _field(1, text))  # role USER


def _deep_value(levels: int) -> bytes:
    """google.protobuf.Value nested ``levels`` lists deep (list_value 6, values 1)."""
    value = b"\x11" + struct.pack("<d", 1.0)  # number_value
    for _ in range(levels):
        value = _field(6, _field(1, value))
    return value


#: name → (method path, raw request bytes, metadata, status code, exact details)
CASES: dict[str, tuple[str, bytes, tuple[tuple[str, str], ...], grpc.StatusCode, str]] = {
    "garbage (1.0)": (
        V10 + "SendMessage",
        b"\xff\xff\xff garbage",
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "the request is not a valid SendMessageRequest protobuf message",
    ),
    "garbage (0.3)": (
        V03 + "SendMessage",
        b"\xff\xff\xff garbage",
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "the request is not a valid SendMessageRequest protobuf message",
    ),
    "garbage on a stream": (
        V10 + "SendStreamingMessage",
        b"\x12\xff\x01",
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "the request is not a valid SendMessageRequest protobuf message",
    ),
    "invalid UTF-8 in a string field": (
        V10 + "SendMessage",
        _send(_text_message(b"h\xffi")),
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "the request is not a valid SendMessageRequest protobuf message",
    ),
    "data nested 150 levels": (
        V10 + "SendMessage",
        _send(_field(1, b"m") + _field(5, _field(4, _deep_value(150)))),
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "the request is not a valid SendMessageRequest protobuf message",
    ),
    "oversized message": (
        V10 + "SendMessage",
        _send(_text_message(b"x" * LIMIT)),
        (),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"SERVER: Received message larger than max ({LIMIT + 17} vs. {LIMIT})",
    ),
    "message without parts": (
        V10 + "SendMessage",
        _send(_field(1, b"m") + b"\x18\x01"),
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "message must have at least one part",
    ),
    "x-user-id too long": (
        V10 + "SendMessage",
        _send(_text_message(b"hi")),
        (("x-user-id", "u" * 256),),
        grpc.StatusCode.INVALID_ARGUMENT,
        "X-User-ID is longer than 255 characters",
    ),
    "unknown task (1.0)": (
        V10 + "GetTask",
        _field(2, b"nope"),  # GetTaskRequest.id
        (),
        grpc.StatusCode.NOT_FOUND,
        "Task nope not found",
    ),
    "unknown task (0.3)": (
        V03 + "GetTask",
        _field(1, b"tasks/nope"),
        (),
        grpc.StatusCode.NOT_FOUND,
        "TaskNotFoundError: Task nope not found",  # 0.3: A2A's error name, then the message
    ),
    "ListTasks page_size -1": (
        V10 + "ListTasks",
        ListTasksRequest(page_size=-1).SerializeToString(),
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "pageSize must be 1 to 100, not -1",
    ),
    "ListTasks page_size 101": (
        V10 + "ListTasks",
        ListTasksRequest(page_size=101).SerializeToString(),
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "pageSize must be 1 to 100, not 101",
    ),
    "ListTasks status 99": (
        V10 + "ListTasks",
        ListTasksRequest(status=99).SerializeToString(),  # type: ignore[arg-type]
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "status 99 is not a task state",
    ),
    "ListTasks history_length -1": (
        V10 + "ListTasks",
        ListTasksRequest(history_length=-1).SerializeToString(),
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "historyLength must be 0 or more, not -1",
    ),
    "GetTask history_length -1": (
        V10 + "GetTask",
        GetTaskRequest(id="nope", history_length=-1).SerializeToString(),
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "historyLength must be 0 or more, not -1",
    ),
    "a 60,000-character task id (1.0)": (
        V10 + "GetTask",
        GetTaskRequest(id="x" * 60_000).SerializeToString(),
        (),
        grpc.StatusCode.NOT_FOUND,  # not RESOURCE_EXHAUSTED: the message fits its header
        f"Task {'x' * 80}… (60000 characters) not found",
    ),
    "a 60,000-character task id (0.3)": (
        V03 + "GetTask",
        _field(1, b"tasks/" + b"x" * 60_000),
        (),
        grpc.StatusCode.NOT_FOUND,
        f"TaskNotFoundError: Task {'x' * 80}… (60000 characters) not found",
    ),
    "a 60,000-character task name that is not one (0.3)": (
        V03 + "GetTask",
        _field(1, b"y" * 60_000),
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "InvalidParamsError: " + f"No task for {'y' * 60_000}"[:1023] + "…",
    ),
    "a push URL with port 99999": (
        V10 + "SendMessage",
        SendMessageRequest(
            message=Message(message_id="m", role=Role.ROLE_USER, parts=[Part(text="hi")]),
            configuration=SendMessageConfiguration(
                task_push_notification_config=TaskPushNotificationConfig(
                    url="http://h.example.com:99999/"
                )
            ),
        ).SerializeToString(),
        (),
        grpc.StatusCode.INVALID_ARGUMENT,
        "push notification url is not a URL with a valid port (1-65535)",
    ),
    "metadata over 64 KiB (the request head's bound)": (
        V10 + "GetTask",
        _field(2, b"nope"),
        (("x-big", "a" * 70_000),),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "received metadata size exceeds hard limit (value length 70000 vs. 65536)",
    ),
    "101 metadata entries": (
        V10 + "GetTask",
        _field(2, b"nope"),
        tuple((f"x-{i}", "y") for i in range(101)),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "more than 100 metadata entries",
    ),
    "unknown method": (
        V10 + "Teleport",
        b"",
        (),
        grpc.StatusCode.UNIMPLEMENTED,
        "Method not found!",
    ),
}


async def call_raw(
    server: BridgeServer, method: str, raw: bytes, metadata: tuple[tuple[str, str], ...]
) -> None:
    """Call ``method`` with ``raw`` request bytes (unary or server-streaming)."""
    async with grpc.aio.insecure_channel(server.grpc_address) as channel:
        if method.endswith("Streaming" + "Message"):
            stream = channel.unary_stream(method)(raw, metadata=metadata)
            async for _ in stream:
                pass
        else:
            await channel.unary_unary(method)(raw, metadata=metadata)


@pytest.mark.parametrize("name", list(CASES))
async def test_bad_call(server: BridgeServer, other_stream: RunningStream, name: str) -> None:
    method, raw, metadata, code, details = CASES[name]
    other_stream.check_running()
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call_raw(server, method, raw, metadata)
    assert (refused.value.code(), refused.value.details()) == (code, details)
    other_stream.check_running()


async def test_the_other_stream_finished_intact(other_stream: RunningStream) -> None:
    await other_stream.finish()
