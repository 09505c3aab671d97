"""Agent-card discovery and the choice of transport.

trpc-agent-go's servers publish a 0.3-era card without ``protocolVersion`` (some
libraries write ``0.2.5``) at both well-known paths; a2a-sdk's publish 1.0 cards with
``supportedInterfaces`` (plus the 0.3 fields when they also speak 0.3) at
``agent-card.json`` only. The client reads both, the way trpc's client looks them up:
``agent-card.json`` first, then ``agent.json``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCard
from google.protobuf.json_format import ParseError

from trpc_bridge.client.errors import RemoteAgentError, failure_text
from trpc_bridge.codecs.a2a.frames import as_list, as_map, as_str
from trpc_bridge.codecs.trpc.keys import CARD_EXTENSION_URI
from trpc_bridge.names import (
    A2A_VERSION_HEADER,
    CARD_PATHS,
    TRANSPORT_GRPC,
    TRANSPORT_JSONRPC,
    TRANSPORT_REST,
)

Binding = Literal["JSONRPC", "HTTP+JSON", "GRPC"]
#: CLI / API transport names → card protocol bindings.
TRANSPORTS: dict[str, Binding] = {
    "jsonrpc": TRANSPORT_JSONRPC,
    "rest": TRANSPORT_REST,
    "grpc": TRANSPORT_GRPC,
}
_BINDING_RANK: dict[str, int] = {TRANSPORT_JSONRPC: 0, TRANSPORT_REST: 1, TRANSPORT_GRPC: 2}


@dataclass(frozen=True)
class Endpoint:
    url: str
    binding: Binding
    #: ``"1.0"`` or ``"0.3"`` (every pre-1.0 version speaks the 0.3 wire).
    version: str


def _version(value: Any) -> str:
    text = as_str(value).strip()
    major = text.split(".", 1)[0]
    return "1.0" if major.isdigit() and int(major) >= 1 else "0.3"


def _below_0_3(version: str) -> bool:
    """No version at all (trpc-a2a-go's card) or an older one such as ``0.2.5``."""
    try:
        major, minor = (int(x) for x in [*version.split("."), "0"][:2])
    except ValueError:
        return True
    return (major, minor) < (0, 3)


def _absolute(url: str, base: str) -> str:
    if not url:
        return base
    if "://" not in url:  # trpc's NormalizeURL: schemeless hosts are http
        return "http://" + url
    return url


def _binding(value: Any) -> Binding | None:
    name = as_str(value).upper()
    for binding in _BINDING_RANK:
        if name == binding:
            return binding  # type: ignore[return-value]
    return None


@dataclass(frozen=True)
class ResolvedCard:
    """A fetched card, read liberally, with what the client needs from it."""

    raw: dict[str, Any]
    name: str
    description: str
    streaming: bool
    #: The card declares the ``trpc-a2a-version`` extension.
    trpc_dialect: bool
    #: No ``protocolVersion`` or one below 0.3: a trpc-a2a-go (0.2.5-era) server.
    legacy: bool
    endpoints: tuple[Endpoint, ...]

    @classmethod
    def read(cls, data: Any, base_url: str) -> ResolvedCard:
        card = as_map(data)
        if not card or not as_str(card.get("name")):
            raise RemoteAgentError(f"not an agent card (no name) at {base_url}")
        declared = as_str(card.get("protocolVersion"))
        legacy = not as_list(card.get("supportedInterfaces")) and _below_0_3(declared)
        capabilities = as_map(card.get("capabilities"))
        extensions = as_list(capabilities.get("extensions"))
        return cls(
            raw=dict(card),
            name=as_str(card.get("name")),
            description=as_str(card.get("description")),
            streaming=capabilities.get("streaming") is True,
            trpc_dialect=any(as_map(e).get("uri") == CARD_EXTENSION_URI for e in extensions),
            legacy=legacy,
            endpoints=_endpoints(card, base_url, legacy),
        )

    def choose(self, transport: str | None = None, version: str | None = None) -> Endpoint:
        """The endpoint to call: ``transport`` (jsonrpc / rest / grpc) and A2A ``version``
        (``0.3`` / ``1.0``) if given, else the best the card offers — 1.0 before 0.3, then
        JSON-RPC, REST, gRPC."""
        wanted = TRANSPORTS.get(transport.lower()) if transport else None
        if transport and wanted is None:
            raise RemoteAgentError(f"unknown transport {transport!r} (jsonrpc, rest or grpc)")
        candidates = [
            e
            for e in self.endpoints
            if (wanted is None or e.binding == wanted) and (version is None or e.version == version)
        ]
        if not candidates:
            offered = ", ".join(sorted({f"{e.binding} {e.version}" for e in self.endpoints}))
            raise RemoteAgentError(
                f"{self.name}: no {wanted or 'matching'} endpoint for A2A {version or 'any'} "
                f"on the card (offers {offered or 'none'})"
            )
        return min(candidates, key=lambda e: (e.version != "1.0", _BINDING_RANK[e.binding]))

    def sdk_card(self, endpoint: Endpoint) -> AgentCard:
        """The card as a2a-sdk's client factory needs it: only ``endpoint``, with a version
        the factory accepts (it rejects ``0.2.5`` and treats a missing one as 0.3)."""
        data = copy.deepcopy(self.raw)
        for key in ("url", "preferredTransport", "protocolVersion", "additionalInterfaces"):
            data.pop(key, None)
        data["supportedInterfaces"] = [
            {
                "url": endpoint.url,
                "protocolBinding": endpoint.binding,
                "protocolVersion": endpoint.version,
            }
        ]
        try:
            return parse_agent_card(data)
        except (ParseError, ValueError) as exc:
            raise RemoteAgentError(f"{self.name}: unusable agent card: {exc}") from exc


def _interface_url(iface: Any, binding: Binding, base_url: str) -> str:
    url = as_str(iface.get("url"))
    if binding == TRANSPORT_GRPC and url:
        return url  # a gRPC target is host:port, without a scheme
    return _absolute(url, base_url)


def _endpoints(card: Any, base_url: str, legacy: bool) -> tuple[Endpoint, ...]:
    found: list[Endpoint] = []
    for entry in as_list(card.get("supportedInterfaces")):
        iface = as_map(entry)
        binding = _binding(iface.get("protocolBinding") or iface.get("transport"))
        if binding is not None:
            url = _interface_url(iface, binding, base_url)
            found.append(Endpoint(url, binding, _version(iface.get("protocolVersion"))))
    version = _version(card.get("protocolVersion"))
    main = _binding(card.get("preferredTransport") or TRANSPORT_JSONRPC)
    url = _absolute(as_str(card.get("url")), base_url)
    if legacy and not urlsplit(url).path.endswith("/"):
        url += "/"  # trpc's client posts to "<card url>/": Go's ServeMux pattern is "<base>/"
    if main is not None and (card.get("url") or not found):
        found.append(Endpoint(url, main, version))
    for entry in as_list(card.get("additionalInterfaces")):
        iface = as_map(entry)
        binding = _binding(iface.get("transport"))
        if binding is not None:
            found.append(Endpoint(_interface_url(iface, binding, base_url), binding, version))
    return tuple(dict.fromkeys(found))  # the 0.3 fields often repeat an interface


def _unreachable(exc: httpx.HTTPError, base: str) -> str:
    """Why the card could not be read. A server that requires a client certificate
    (``--auth mtls``) resets the connection when it gets none it accepts, with no TLS
    alert the client could quote: say what that may mean."""
    text = str(exc) or failure_text(exc)
    if base.lower().startswith("https:") and isinstance(
        exc, httpx.ReadError | httpx.RemoteProtocolError
    ):
        text += (
            "; the server closed the connection, as a server that requires a client "
            "certificate does when it gets none it accepts (--cert/--key)"
        )
    return text


async def fetch_card(http: httpx.AsyncClient, url: str) -> ResolvedCard:
    """GET ``<url>/.well-known/agent-card.json``, falling back to ``agent.json``."""
    base = _absolute(url.rstrip("/"), url)
    failures: list[str] = []
    for path in CARD_PATHS:
        try:
            response = await http.get(base + path)
        except httpx.HTTPError as exc:
            raise RemoteAgentError(f"cannot reach {base}: {_unreachable(exc, base)}") from exc
        if response.status_code != 200:
            failures.append(f"{path}: HTTP {response.status_code}")
            continue
        try:
            data = response.json()
        except ValueError:
            failures.append(f"{path}: not JSON")
            continue
        return ResolvedCard.read(data, base)
    raise RemoteAgentError(f"no agent card at {base} ({'; '.join(failures)})")


def extended_card_endpoint(card: ResolvedCard) -> Endpoint | None:
    """Where the extended card is asked for (JSON-RPC 1.0), for a card that announces one."""
    if as_map(card.raw.get("capabilities")).get("extendedAgentCard") is not True:
        return None
    try:
        return card.choose("jsonrpc", "1.0")
    except RemoteAgentError:
        return None


async def fetch_extended_card(
    http: httpx.AsyncClient, card: ResolvedCard, headers: Mapping[str, str] | None = None
) -> ResolvedCard:
    """The extended card (A2A 1.0 ``GetExtendedAgentCard`` over JSON-RPC), for a card
    that announces one: the bridge lists gRPC only there (``server/card.py``). ``headers``
    carry the caller's credential (the call is authenticated). The public card is
    returned when the extended one cannot be had."""
    endpoint = extended_card_endpoint(card)
    if endpoint is None:
        return card
    try:
        body = {"jsonrpc": "2.0", "id": "card", "method": "GetExtendedAgentCard", "params": {}}
        response = await http.post(
            endpoint.url, json=body, headers={**(headers or {}), A2A_VERSION_HEADER: "1.0"}
        )
        result = response.json().get("result")
        base = endpoint.url.rstrip("/")
        return ResolvedCard.read(result, base) if isinstance(result, dict) else card
    except (RemoteAgentError, httpx.HTTPError, ValueError):
        return card
