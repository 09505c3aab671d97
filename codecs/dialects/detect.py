"""Which client is calling: read from what each framework's client really sends.

Captured on loopback (``tests/vectors/N01``–``N04``, interop/python):

- trpc-agent-go ``A2AAgent``: message metadata ``interaction_spec_version``,
  ``invocation_id``, ``user_id``; ``User-Agent: trpc-a2a-go-client/…``.
- trpc-agent-python ``TrpcRemoteA2aAgent`` (both extras): the same metadata plus
  ``object_type``, ``tag`` and ``llm_response_id`` (its event converter stamps response
  metadata on the request message too).
- Google ADK ``RemoteA2aAgent``: no message metadata; ``is_user_input: true`` on every
  part the user wrote; with ``use_legacy=False`` also ``A2A-Extensions:`` ADK's extension.
- Google ADK for TypeScript ``RemoteA2AAgent`` (interop/adk-js): no part marker, but its
  session in the message metadata: ``adk_app_name``, ``adk_user_id``, ``adk_session_id``.
- anything else (a2a-sdk, other SDKs): usually none of these.

So: ADK by its part marker, its extension or its session keys; trpc-agent-python by the
response keys on a trpc request; trpc-agent-go by the spec version alone; plain A2A
otherwise. The bridge does not use the User-Agent: proxies rewrite it, and nothing else
needs it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum
from typing import Any

from trpc_bridge.codecs.trpc.keys import META_OBJECT_TYPE, META_RESPONSE_ID, META_SPEC_VERSION

#: ADK's A2A extension (its v2 client asks for it in ``A2A-Extensions``).
ADK_EXTENSION_URI = "https://google.github.io/adk-docs/a2a/a2a-extension/"
#: The part metadata ADK's client puts on every part the user wrote.
ADK_USER_INPUT = "is_user_input"
#: The message metadata ADK for TypeScript's client names its caller's session with.
ADK_APP_NAME = "adk_app_name"


class ClientFramework(Enum):
    TRPC_GO = "trpc-go"
    TRPC_PYTHON = "trpc-python"
    ADK = "adk"
    PLAIN = "plain"


def detect_caller(
    message_metadata: Mapping[str, Any],
    part_metadata: Iterable[Mapping[str, Any]] = (),
    extensions: Iterable[str] = (),
) -> ClientFramework:
    """The caller of one request, from its message metadata, the metadata of its parts
    and the A2A extensions it asked for."""
    if ADK_EXTENSION_URI in {e.strip() for e in extensions}:
        return ClientFramework.ADK
    if any(m.get(ADK_USER_INPUT) is True for m in part_metadata):
        return ClientFramework.ADK
    if isinstance(message_metadata.get(ADK_APP_NAME), str):
        return ClientFramework.ADK
    if not message_metadata.get(META_SPEC_VERSION):
        return ClientFramework.PLAIN
    if META_OBJECT_TYPE in message_metadata or META_RESPONSE_ID in message_metadata:
        return ClientFramework.TRPC_PYTHON
    return ClientFramework.TRPC_GO


__all__ = ["ADK_EXTENSION_URI", "ClientFramework", "detect_caller"]
