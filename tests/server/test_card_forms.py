"""Which form of the card each request gets at the well-known paths, by default and with
``--strict-card`` (``bridge/server/a2a/card_routes.py``). What real clients make of these
forms is the interop matrix's business (tests/interop/test_framework_matrix.py, every
client with the default card)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.cli.flag_values import server_options
from trpc_bridge.cli.server_flags import SERVER_FLAGS
from trpc_bridge.names import CARD_PATHS
from trpc_bridge.server import BridgeServer, ServerOptions

#: What a2a-sdk 0.3 adds beside the 1.0 card, and the A2A 1.0 schema forbids.
V0_3_FIELDS = {"url", "preferredTransport", "protocolVersion", "additionalInterfaces"}
CURRENT, LEGACY = CARD_PATHS


async def _forms(options: ServerOptions) -> dict[str, dict[str, Any]]:
    """The card as read without A2A-Version, with 1.0, with 0.3, and at agent.json."""
    async with BridgeServer(demo_agent(), options) as server, httpx.AsyncClient() as http:
        base = server.base_url

        async def get(path: str, **headers: str) -> dict[str, Any]:
            response = await http.get(f"{base}{path}", headers=headers)
            response.raise_for_status()
            assert response.headers["vary"] == "A2A-Version"
            card: dict[str, Any] = response.json()
            return card

        return {
            "unmarked": await get(CURRENT),
            "1.0": await get(CURRENT, **{"A2A-Version": "1.0"}),
            "0.3": await get(CURRENT, **{"A2A-Version": "0.3"}),
            "agent.json": await get(LEGACY),
        }


def _bindings(card: dict[str, Any]) -> set[str]:
    return {i["protocolBinding"] for i in card["supportedInterfaces"]}


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict-card"])
async def test_card_forms(strict: bool) -> None:
    forms = await _forms(ServerOptions(strict_card=strict))
    # Requests marked 1.x (a2a-sdk 1.x, ADK) get the same-origin 1.0 card either way.
    assert not V0_3_FIELDS & forms["1.0"].keys()
    assert "GRPC" not in _bindings(forms["1.0"])
    # 0.3-marked requests and agent.json get both forms, every interface.
    for name in ("0.3", "agent.json"):
        assert forms[name].keys() >= V0_3_FIELDS, name
        assert forms[name]["url"] == forms[name]["supportedInterfaces"][0]["url"]
        assert "GRPC" in _bindings(forms[name])
    unmarked = forms["unmarked"]
    assert "GRPC" in _bindings(unmarked)
    if strict:  # the TCK's request: the 1.0 card, nothing the 1.0 schema forbids
        assert not V0_3_FIELDS & unmarked.keys()
    else:  # the same request from an a2a-sdk 0.3 client: the merged card it can read
        assert unmarked == forms["0.3"]


def test_strict_card_flag_reaches_the_options() -> None:
    defaults = {name: flag.option.default for name, flag in SERVER_FLAGS.items()}
    assert server_options(defaults).strict_card is False
    assert server_options({**defaults, "strict_card": True}).strict_card is True
