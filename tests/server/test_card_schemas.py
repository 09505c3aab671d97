"""Every card the bridge serves is one its readers accept (``docs/specs/trpc-interaction.md``
§2.11): each form at the well-known paths and the extended card, of ``serve`` and of a proxy in
front of each kind of upstream card, checked against A2A 1.0's proto (the card parses,
every field of its type; what the proto marks REQUIRED is there) and, for the forms 0.3
readers get, against A2A 0.3's JSON schema as the installed a2a-sdk carries it (its 0.3
models are generated from that schema): a field 0.3 requires is present even when empty,
which proto3's JSON leaves out (a skill's empty ``tags``)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a.compat.v0_3 import types as types_v03
from a2a.types import AgentCard, AgentSkill
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf.json_format import ParseDict
from pydantic import BaseModel
from replay_server import GO_CARD, ReplayPeer, serving

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.client import RemoteAgent
from trpc_bridge.names import CARD_PATHS
from trpc_bridge.server import BridgeServer, ServerOptions

#: What a2a-sdk 0.3 adds beside the 1.0 card (the 1.0 proto does not know them).
V0_3_FIELDS = {
    "url",
    "preferredTransport",
    "protocolVersion",
    "additionalInterfaces",
    "supportsAuthenticatedExtendedCard",
}
CURRENT, LEGACY = CARD_PATHS

#: An a2a-sdk 1.x agent's card whose skills have no tags, one no description either:
#: what proto3 JSON would leave out of a proxy's card.
SDK_CARD: dict[str, Any] = {
    "name": "sdk-agent",
    "description": "an a2a-sdk 1.x agent",
    "version": "1.0.0",
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [
        {"id": "s1", "name": "lookup", "description": "looks things up", "tags": []},
        {"id": "s2", "name": "bare"},
    ],
    "supportedInterfaces": [{"url": "", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
}


def check_v1_0(card: dict[str, Any], *, bridge_made: bool) -> None:
    """The card as the 1.0 proto reads it: every field but the 0.3 ones is a 1.0 field
    of the right type; the fields the proto marks REQUIRED are there (``bridge_made``:
    all of them; a proxy cannot make up what its upstream's skills lack)."""
    proto = ParseDict({k: v for k, v in card.items() if k not in V0_3_FIELDS}, AgentCard())
    if bridge_made:
        validate_proto_required_fields(proto)
    else:
        assert card["name"] and card["supportedInterfaces"] and "capabilities" in card


def check_v0_3(card: dict[str, Any]) -> None:
    """The card as A2A 0.3's JSON schema reads it (strictly: no coercion)."""
    types_v03.AgentCard.model_validate_json(json.dumps(card), strict=True)


def _required_v0_3(model: type[BaseModel], proto: type[Any]) -> set[str]:
    """The fields 0.3 requires of ``model`` that 1.0's ``proto`` has too."""
    required = {f.alias or n for n, f in model.model_fields.items() if f.is_required()}
    return required & {f.json_name for f in proto.DESCRIPTOR.fields}


CARD_REQUIRED = _required_v0_3(types_v03.AgentCard, AgentCard)
SKILL_REQUIRED = _required_v0_3(types_v03.AgentSkill, AgentSkill)


def check_present(card: dict[str, Any]) -> None:
    """Whoever reads it, a card at a well-known path holds every field 0.3 requires that
    1.0 has too, even when empty (a 0.3 client reads the unmarked form too; proto3 JSON
    would drop them). The extended card is asked for in one version, and answered in it."""
    assert not CARD_REQUIRED - card.keys(), CARD_REQUIRED - card.keys()
    for skill in card["skills"]:
        assert not SKILL_REQUIRED - skill.keys(), (skill, SKILL_REQUIRED - skill.keys())


V1_0, V0_3, BOTH = {"1.0"}, {"0.3"}, {"1.0", "0.3"}


async def _served(server: BridgeServer) -> dict[str, tuple[dict[str, Any], set[str]]]:
    """Each form of the card the server serves, and which readers get it."""
    base = server.base_url.rstrip("/")
    async with httpx.AsyncClient() as http:

        async def get(path: str, **headers: str) -> dict[str, Any]:
            response = await http.get(f"{base}{path}", headers=headers)
            response.raise_for_status()
            found: dict[str, Any] = response.json()
            return found

        async def rpc(method: str, **headers: str) -> dict[str, Any]:
            body = {"jsonrpc": "2.0", "id": "1", "method": method}
            response = await http.post(f"{base}/", json=body, headers=headers)
            found: dict[str, Any] = response.json()["result"]
            return found

        v1 = {"A2A-Version": "1.0"}
        unmarked = await get(CURRENT)
        return {
            # The unmarked form is the merged card (0.3 readers get it too), or the 1.0
            # card alone with --strict-card.
            "agent-card.json": (unmarked, BOTH if "url" in unmarked else V1_0),
            "agent-card.json, A2A-Version 1.0": (await get(CURRENT, **v1), V1_0),
            "agent-card.json, A2A-Version 0.3": (
                await get(CURRENT, **{"A2A-Version": "0.3"}),
                BOTH,
            ),
            "agent.json": (await get(LEGACY), BOTH),
            "extended, JSON-RPC 1.0": (await rpc("GetExtendedAgentCard", **v1), V1_0),
            "extended, JSON-RPC 0.3": (await rpc("agent/getAuthenticatedExtendedCard"), V0_3),
            "extended, REST": (await get("/extendedAgentCard", **v1), V1_0),
        }


def _check(forms: dict[str, tuple[dict[str, Any], set[str]]], *, bridge_made: bool) -> None:
    for name, (card, readers) in forms.items():
        try:
            if "1.0" in readers:
                check_v1_0(card, bridge_made=bridge_made)
            if not name.startswith("extended"):  # any client may read a well-known form
                check_present(card)
            if "0.3" in readers:
                check_v0_3(card)
        except Exception as exc:  # name the form that failed
            raise AssertionError(f"{name}: {exc}") from exc


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict-card"])
async def test_serve_cards(strict: bool) -> None:
    async with BridgeServer(demo_agent(), ServerOptions(strict_card=strict)) as server:
        _check(await _served(server), bridge_made=True)


@contextlib.asynccontextmanager
async def _upstream(kind: str) -> AsyncIterator[str]:
    if kind == "bridge":
        async with BridgeServer(demo_agent(), ServerOptions(grpc_port=None)) as server:
            yield server.base_url
        return
    card = json.loads(json.dumps(GO_CARD if kind == "trpc-agent-go" else SDK_CARD))
    peer = ReplayPeer(card=card)
    async with serving(peer) as url:
        for interface in card.get("supportedInterfaces", []):
            interface["url"] = url
        yield url


@pytest.mark.parametrize("upstream", ["trpc-agent-go", "a2a-sdk", "bridge"])
async def test_proxy_cards(upstream: str) -> None:
    """A proxy's card is built from its upstream's; an upstream skill without tags keeps
    an empty ``tags`` list (0.3 requires one)."""
    async with (
        _upstream(upstream) as url,
        await RemoteAgent.connect(url) as remote,
        BridgeServer(remote, ServerOptions()) as proxy,
    ):
        forms = await _served(proxy)
    _check(forms, bridge_made=False)
    card, _ = forms["agent.json"]
    assert all("tags" in skill for skill in card["skills"])
