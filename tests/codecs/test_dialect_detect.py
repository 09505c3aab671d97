"""Which client is calling (codecs/dialects/detect.py), on the requests each framework's
client really sent (tests/vectors/N01–N04, captured on loopback)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from vector_files import VECTORS

from trpc_bridge.codecs.dialects.detect import ADK_EXTENSION_URI, ClientFramework, detect_caller

CAPTURED = [
    v
    for v in (json.loads(p.read_text()) for p in sorted(VECTORS.glob("N*.json")))
    if v.get("direction") == "negotiate"
]


def _detect(message: dict[str, Any], headers: dict[str, str]) -> ClientFramework:
    extensions = headers.get("a2a-extensions", "").split(",")
    parts = [p.get("metadata", {}) for p in message.get("parts", [])]
    return detect_caller(message.get("metadata", {}), parts, extensions)


@pytest.mark.parametrize("vector", CAPTURED, ids=lambda v: v["id"])
def test_each_framework_client_is_recognised(vector: dict[str, Any]) -> None:
    assert _detect(vector["message"], vector["headers"]).value == vector["expect"]


def test_every_framework_client_was_captured() -> None:
    assert {v["expect"] for v in CAPTURED} == {"trpc-go", "trpc-python", "adk"}


def test_adk_extension_and_plain_callers() -> None:
    assert detect_caller({}, (), [ADK_EXTENSION_URI]) is ClientFramework.ADK
    assert detect_caller({}, [{}]) is ClientFramework.PLAIN
    assert detect_caller({"user_id": "u"}) is ClientFramework.PLAIN


def test_adk_typescript_client_by_its_session_keys() -> None:
    """ADK for TypeScript's RemoteA2AAgent marks no part; it names its session."""
    metadata = {"adk_app_name": "app", "adk_user_id": "u", "adk_session_id": "s"}
    assert detect_caller(metadata, [{}]) is ClientFramework.ADK
