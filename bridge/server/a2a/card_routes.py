"""The agent card at its two well-known URLs, in the form each kind of client reads.

By default ``/.well-known/agent-card.json`` is the *merged* card, as a2a-sdk 1.3's own card
route serves it whenever a server also speaks 0.3: the 1.0 card (``supportedInterfaces``,
which lists the 0.3 interfaces too, with their version) plus the 0.3 fields (``url``,
``preferredTransport``, ``protocolVersion``, ``additionalInterfaces``). Every client reads
it:

- A2A 1.0 clients (a2a-sdk 1.x, trpc-agent-python's ``a2a-v1`` extra) parse it leniently
  and use ``supportedInterfaces``;
- A2A 0.3 clients (a2a-sdk 0.3, trpc-agent-python's ``a2a`` extra, other SDKs' 0.3
  clients) need ``url`` and ``preferredTransport``, and ignore the 1.0 fields;
- trpc-agent-go's v0 ``A2AAgent`` reads ``url`` and ``capabilities``.

The one reader the merged card fails is a strict A2A 1.0 schema validator (the TCK's card
schema test): the 1.0 JSON schema forbids the 0.3 fields. No request tells such a
validator apart from a 0.3 client (a2a-sdk 0.3's resolver sends the TCK's very request:
plain httpx, no ``A2A-Version``), so the choice is the deployment's: ``strict_card=True``
(``--strict-card``) serves unmarked requests the 1.0 card alone (``docs/specs/a2a.md``).

A request marked ``A2A-Version: 1.x`` (Google ADK's client marks it) gets the 1.0 card
without the interfaces on another origin (``same_origin``, see ``card.public_card``); one
marked ``0.x``, and any request at ``agent.json``, the merged card.

Every answer carries ``Cache-Control: public, max-age=…`` and a weak ``ETag``; a matching
``If-None-Match`` gets 304.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from trpc_bridge.names import A2A_VERSION_HEADER, CARD_PATHS
from trpc_bridge.server.a2a.card import CardForms, card_json

#: Seconds clients may keep the card. It changes when the server restarts, and its
#: signature when the card key rotates (the retired key stays published longer).
DEFAULT_CARD_MAX_AGE = 300


def _wants_v1(request: Request) -> bool:
    return request.headers.get("a2a-version", "").strip().startswith("1.")


def _wants_v0_3(request: Request) -> bool:
    return request.headers.get(A2A_VERSION_HEADER, "").strip().startswith("0.")


class _CardAnswer:
    """One form of the card, serialised once (again only when its signing key changes)."""

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


class _Answers:
    """The answers for one :class:`CardForms`, serialised once."""

    def __init__(self, forms: CardForms, max_age: int, strict_card: bool) -> None:
        self.forms = forms
        self.merged = _CardAnswer(card_json(forms.full, v0_3=True), max_age)  # 1.0 + 0.3 fields
        self.unmarked = _CardAnswer(card_json(forms.full), max_age) if strict_card else self.merged
        self.v1_marked = _CardAnswer(card_json(forms.same_origin), max_age)


def card_routes(
    cards: Callable[[], CardForms],
    *,
    base_path: str = "",
    max_age: int = DEFAULT_CARD_MAX_AGE,
    strict_card: bool = False,
) -> list[BaseRoute]:
    """``GET {base_path}/.well-known/agent-card.json`` and ``…/agent.json``. ``cards``:
    the forms to serve now, asked on every request; the answers are made again only when
    it returns other forms (the card signed with a new key: ``card_signing.SignedCards``).
    A request marked ``A2A-Version: 1.x`` gets ``same_origin`` (a2a-sdk 1.x clients,
    Google ADK's among them, which refuses interfaces on another origin: see
    ``card.public_card``); one without the header gets ``full`` merged with its 0.3
    fields, or in its 1.0 form alone when ``strict_card`` (see the module doc)."""
    made = [_Answers(cards(), max_age, strict_card)]

    def answers() -> _Answers:
        forms = cards()
        if forms is not made[0].forms:
            made[0] = _Answers(forms, max_age, strict_card)
        return made[0]

    async def current(request: Request) -> Response:
        now = answers()
        if _wants_v0_3(request):
            return now.merged(request)
        return (now.v1_marked if _wants_v1(request) else now.unmarked)(request)

    async def legacy(request: Request) -> Response:
        return answers().merged(request)

    current_path, legacy_path = CARD_PATHS
    return [
        Route(f"{base_path}{current_path}", current, methods=["GET"]),
        Route(f"{base_path}{legacy_path}", legacy, methods=["GET"]),
    ]
