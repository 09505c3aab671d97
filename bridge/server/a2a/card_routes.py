"""The agent card at its two well-known URLs, in the form each kind of client reads.

A2A 1.0 validates ``/.well-known/agent-card.json`` against its JSON schema, which forbids
the 0.3 fields (``url``, ``preferredTransport``, ``protocolVersion``,
``additionalInterfaces``) that a2a-sdk adds whenever the card also lists a 0.3
interface. Who reads what:

- A2A 1.0 clients (a2a-sdk 1.x, the TCK) read ``agent-card.json`` and use
  ``supportedInterfaces`` (which still lists the 0.3 interfaces, with their version);
- trpc-agent-go's v0 ``A2AAgent`` reads ``agent-card.json`` (falling back to
  ``agent.json``) and uses only ``url``, which it replaces by the URL it was given when
  the card has none, and ``capabilities``: the 1.0 form works for it;
- 0.3 clients that need ``url`` (a2a-sdk 0.3) read the card a request marked
  ``A2A-Version: 0.x`` gets, or the one at ``agent.json``: both carry the 0.3 fields
  beside the 1.0 ones.

a2a-sdk 0.3's card resolver (trpc-agent-python's ``a2a`` extra) reads ``agent-card.json``
with the very request the TCK sends (plain httpx: same method, path and headers, no
``A2A-Version``), so no request tells the two apart: ``legacy_card=True`` (``--legacy-card``)
gives unmarked requests the card with the 0.3 fields, for deployments whose callers are
such clients, at the cost of the 1.0 schema check.

Both answers carry ``Cache-Control: public, max-age=…`` and a weak ``ETag``; a matching
``If-None-Match`` gets 304.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from a2a.types import AgentCard
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from trpc_bridge.names import A2A_VERSION_HEADER, CARD_PATHS
from trpc_bridge.server.a2a.card import card_json

#: The card changes only when the server restarts; clients may keep it this long.
DEFAULT_CARD_MAX_AGE = 300


def _wants_v1(request: Request) -> bool:
    return request.headers.get("a2a-version", "").strip().startswith("1.")


def _wants_v0_3(request: Request) -> bool:
    return request.headers.get(A2A_VERSION_HEADER, "").strip().startswith("0.")


class _CardAnswer:
    """One form of the card, serialised once (the card does not change while serving)."""

    def __init__(self, card: dict[str, Any], max_age: int) -> None:
        self.body = json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode()
        self.etag = f'W/"{hashlib.sha256(self.body).hexdigest()[:32]}"'
        self.headers = {
            "Cache-Control": f"public, max-age={max_age}",
            "ETag": self.etag,
            "Vary": A2A_VERSION_HEADER,
        }

    def __call__(self, request: Request) -> Response:
        tags = request.headers.get("if-none-match", "").split(",")
        if self.etag.removeprefix("W/") in (tag.strip().removeprefix("W/") for tag in tags):
            return Response(status_code=304, headers=self.headers)
        return Response(self.body, media_type="application/json", headers=self.headers)


def card_routes(
    card: AgentCard,
    *,
    base_path: str = "",
    max_age: int = DEFAULT_CARD_MAX_AGE,
    same_origin: AgentCard | None = None,
    legacy_card: bool = False,
) -> list[BaseRoute]:
    """``GET {base_path}/.well-known/agent-card.json`` and ``…/agent.json``.
    ``same_origin``: the card for requests marked ``A2A-Version: 1.x`` (a2a-sdk 1.x
    clients, Google ADK's among them, which refuses interfaces on another origin: see
    ``card.public_card``); a request without the header gets ``card``, in its 1.0 form, or
    with the 0.3 fields too when ``legacy_card`` (see the module doc)."""
    both = _CardAnswer(card_json(card, v0_3=True), max_age)  # the 1.0 card, the 0.3 fields
    v1_0 = both if legacy_card else _CardAnswer(card_json(card), max_age)
    v1_marked = _CardAnswer(card_json(same_origin), max_age) if same_origin else v1_0

    async def current(request: Request) -> Response:
        if _wants_v0_3(request):
            return both(request)
        return (v1_marked if _wants_v1(request) else v1_0)(request)

    async def legacy(request: Request) -> Response:
        return both(request)

    current_path, legacy_path = CARD_PATHS
    return [
        Route(f"{base_path}{current_path}", current, methods=["GET"]),
        Route(f"{base_path}{legacy_path}", legacy, methods=["GET"]),
    ]
