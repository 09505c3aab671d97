"""AgentRequest ⇄ A2A user message, and version negotiation."""

from __future__ import annotations

from a2a.compat.v0_3 import conversions
from a2a.types import Message, Part, Role
from google.protobuf.json_format import ParseDict
from google.protobuf.struct_pb2 import Value

from trpc_bridge.codecs.encoding import EncodingRequest, Negotiation, select_encoding
from trpc_bridge.codecs.trpc.request import (
    message_to_request,
    request_to_message,
    supports_spec_version,
)
from trpc_bridge.events import AgentRequest, ContentPart


def _v03(message: Message) -> dict[str, object]:
    return conversions.to_compat_message(message).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )


def test_empty_request_sends_one_empty_text_part() -> None:
    wire = _v03(request_to_message(AgentRequest(), message_id="m"))
    assert wire["parts"] == [{"kind": "text", "text": ""}]
    assert wire["metadata"] == {"interaction_spec_version": "0.1"}


def test_explicit_trpc_keys_win_over_transferred_state() -> None:
    request = AgentRequest(
        text="x", user_id="u2", metadata={"user_id": "stale", "interaction_spec_version": "9"}
    )
    wire = _v03(request_to_message(request, message_id="m"))
    assert wire["metadata"] == {"user_id": "u2", "interaction_spec_version": "0.1"}


def test_no_spec_version_when_not_negotiated() -> None:
    wire = _v03(request_to_message(AgentRequest(text="x"), message_id="m", spec_version=None))
    assert "metadata" not in wire


def test_inbound_message_concatenates_text_and_keeps_files_and_data() -> None:
    data = Part(data=ParseDict({"key": "value"}, Value()))
    counted = Part(data=ParseDict({"count": 2, "enabled": True}, Value()))
    image = Part(url="https://x/y.png", media_type="image/png", filename="y.png")
    audio = Part(raw=b"RIFF", media_type="wav")
    message = Message(
        message_id="m1",
        context_id="ctx",
        role=Role.ROLE_USER,
        parts=[Part(text="Text: "), data, Part(text="more"), image, audio, counted],
    )
    message.metadata.update({"interaction_spec_version": "0.1", "invocation_id": "inv", "k": 1})
    request = message_to_request(message, user_id="alice")
    assert request.text == "Text: more"
    assert [p.type for p in request.content_parts] == ["text", "image", "audio", "text"]
    assert request.content_parts[3].text == '{"count":2,"enabled":true}'  # not 2.0
    assert request.content_parts[0].text == '{"key":"value"}'
    assert request.content_parts[1].url == "https://x/y.png"
    assert request.content_parts[2].data == b"RIFF"
    assert request.user_id == "alice"
    assert request.invocation_id == "inv"
    assert request.interaction_spec_version == "0.1"
    assert request.context_id == "ctx"


def test_content_part_names_follow_trpc() -> None:
    request = AgentRequest(
        content_parts=[
            ContentPart(type="audio", data=b"x", mime_type="audio/wav"),
            ContentPart(type="file", url="https://x/report.pdf", name="report.pdf"),
            ContentPart(type="file", data=b"x"),
        ]
    )
    parts = _v03(request_to_message(request, message_id="m"))["parts"]
    assert isinstance(parts, list)
    assert [p["file"]["name"] for p in parts] == ["audio", "report.pdf", "file"]
    assert [p["metadata"]["content_type"] for p in parts] == ["audio", "file", "file"]


def test_negotiation_policy() -> None:
    assert supports_spec_version("0.1") and supports_spec_version("0.2")
    assert not supports_spec_version("1.0") and not supports_spec_version(None)

    def chosen(policy: str, version: str | None) -> str:
        return select_encoding(policy, EncodingRequest(spec_version=version)).name

    assert chosen(Negotiation.AUTO, "0.1") == "trpc"
    assert chosen(Negotiation.AUTO, None) == "plain"
    assert chosen(Negotiation.ALWAYS, None) == "trpc"
    assert chosen(Negotiation.NEVER, "0.1") == "plain"
    assert chosen("plain", "0.1") == "plain" and chosen("trpc", None) == "trpc"
