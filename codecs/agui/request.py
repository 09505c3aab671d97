"""AG-UI ``RunAgentInput`` → :class:`~trpc_bridge.events.AgentRequest`: the request side
of the AG-UI door (``docs/specs/trpc-interaction.md`` §5)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ag_ui.core import (
    AudioPart,
    DataSource,
    DocumentPart,
    ImagePart,
    RunAgentInput,
    TextPart,
    UrlSource,
    UserMessage,
    VideoPart,
)

from trpc_bridge.events import AgentRequest, ContentPart, ContentPartType


def request_from_run_input(run_input: RunAgentInput, *, user_id: str = "") -> AgentRequest:
    """The run's last user message as an :class:`AgentRequest`: text parts concatenated
    (as trpc does), inline or URL media as content parts; ``threadId`` is the context
    (session) id and ``runId`` the invocation id."""
    last = next(
        (m for m in reversed(run_input.messages) if isinstance(m, UserMessage)),
        None,
    )
    text, message_id = "", ""
    parts: list[ContentPart] = []
    if last is not None:
        message_id = last.id
        if isinstance(last.content, str):
            text = last.content
        else:
            text = "".join(p.text for p in last.content if isinstance(p, TextPart))
            parts = [c for p in last.content if (c := _media_part(p)) is not None]
    return AgentRequest(
        text=text,
        content_parts=parts,
        context_id=run_input.thread_id,
        invocation_id=run_input.run_id,
        user_id=user_id,
        message_id=message_id,
    )


_MEDIA_TYPES: dict[type[Any], ContentPartType] = {
    ImagePart: "image",
    AudioPart: "audio",
    VideoPart: "file",
    DocumentPart: "file",
}


def _media_part(part: Any) -> ContentPart | None:
    kind = _MEDIA_TYPES.get(type(part))
    if kind is None:
        return None
    source = part.source
    if isinstance(source, UrlSource):
        return ContentPart(type=kind, url=source.value, mime_type=source.mime_type or "")
    if isinstance(source, DataSource):
        try:
            data = base64.b64decode(source.value, validate=True)
        except (binascii.Error, ValueError):
            return None
        return ContentPart(type=kind, data=data, mime_type=source.mime_type)
    return None  # a provider file handle: only that provider can resolve it
