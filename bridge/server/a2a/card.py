"""The agent card the bridge serves for a Python agent.

Shaped like trpc-agent-go's card (``docs/specs/trpc-interaction.md`` §2.11): the agent's own skill
tagged ``default`` plus one skill per tool, ``capabilities.streaming``, and the
``trpc-a2a-version`` extension. It is an a2a-sdk 1.0 card with one interface per
transport; the JSON-RPC interface is listed for 1.0 and for 0.3 on the same URL, which
makes the SDK also render the 0.3 fields (``url``, ``preferredTransport``,
``protocolVersion``) that trpc's v0 client and other 0.3 peers read.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types import AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill
from google.protobuf.json_format import MessageToDict

from trpc_bridge import __version__
from trpc_bridge.agent import Agent
from trpc_bridge.codecs.tfrs.envelope import EXTENSION_URI as TFRS_EXTENSION_URI
from trpc_bridge.codecs.tfrs.envelope import VERSION as TFRS_VERSION
from trpc_bridge.codecs.trpc.keys import CARD_EXTENSION_URI, INTERACTION_SPEC_VERSION
from trpc_bridge.names import TRANSPORT_GRPC, TRANSPORT_JSONRPC, TRANSPORT_REST


def _skills(agent: Agent) -> list[AgentSkill]:
    # Skill ids follow trpc's v1 card (`agent`, `tool-<name>`): the SDK requires ids.
    main = AgentSkill(
        id="agent",
        name=agent.name,
        description=agent.description,
        tags=["default"],
        input_modes=["text"],
        output_modes=["text"],
    )
    skills = [main]
    for skill in agent.skills:
        skills.append(
            AgentSkill(
                id=f"tool-{skill.name}",
                name=skill.name,
                description=skill.description,
                tags=list(skill.tags),
                input_modes=["text"],
                output_modes=["text"],
            )
        )
    return skills


def build_agent_card(
    agent: Agent, *, base_url: str, grpc_address: str = "", push: bool = False
) -> AgentCard:
    """The card for ``agent`` served at ``base_url`` (``http://host:port[/path]``);
    ``grpc_address`` (``host:port``) adds the gRPC interface; ``push`` declares push
    notifications."""
    base = base_url.rstrip("/")
    interfaces = [
        AgentInterface(url=f"{base}/", protocol_binding=TRANSPORT_JSONRPC, protocol_version="1.0"),
        AgentInterface(url=f"{base}/", protocol_binding=TRANSPORT_JSONRPC, protocol_version="0.3"),
        AgentInterface(url=base, protocol_binding=TRANSPORT_REST, protocol_version="1.0"),
        # REST 0.3 is served too (a2a-sdk's adapter) but not advertised: that adapter turns
        # an error in a stream (e.g. resubscribe to an unknown task) into a dropped
        # connection instead of an error, so clients should not pick it.
    ]
    if grpc_address:
        # One gRPC server carries both services (``lf.a2a.v1`` and 0.3's ``a2a.v1``).
        interfaces += [
            AgentInterface(
                url=grpc_address, protocol_binding=TRANSPORT_GRPC, protocol_version=version
            )
            for version in ("1.0", "0.3")
        ]
    extension = AgentExtension(uri=CARD_EXTENSION_URI)
    extension.params.update({"version": INTERACTION_SPEC_VERSION})
    # Optional: a caller that asks for it gets tfrs progress beside its usual encoding.
    progress = AgentExtension(
        uri=TFRS_EXTENSION_URI,
        description="tfrs progress envelopes in working status updates "
        "(docs/specs/tfrs-progress.md)",
    )
    progress.params.update({"version": TFRS_VERSION})
    return AgentCard(
        name=agent.name,
        description=agent.description,
        version=__version__,
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=push, extensions=[extension, progress]
        ),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=_skills(agent),
    )


def public_card(card: AgentCard) -> AgentCard:
    """The card a request marked ``A2A-Version: 1.x`` gets at the well-known path (a2a-sdk
    1.x clients, Google ADK's among them; ``card_routes``): ``card`` without its gRPC
    interfaces, which the extended card (``GetExtendedAgentCard``, every transport) and
    the card for unmarked requests (the TCK, trpc-agent-go, curl) keep.

    Why: Google ADK's client refuses a card any of whose interface URLs is not on the
    origin the card came from (scheme, host and port), and gRPC listens on its own port,
    with a ``host:port`` target that is no URL of that origin. Every client can use the
    interfaces that remain (JSON-RPC 0.3/1.0, REST); an a2a-sdk gRPC client finds gRPC
    in the extended card, which ``capabilities.extendedAgentCard`` announces (it calls
    ``get_extended_agent_card``; ``RemoteAgent`` fetches it when asked for gRPC).
    """
    public = AgentCard()
    public.CopyFrom(card)
    kept = [i for i in card.supported_interfaces if i.protocol_binding != TRANSPORT_GRPC]
    if len(kept) == len(card.supported_interfaces):
        return public
    del public.supported_interfaces[:]
    public.supported_interfaces.extend(kept)
    public.capabilities.extended_agent_card = True
    return public


@dataclass(frozen=True)
class CardForms:
    """The forms of one card the bridge serves (``card_routes``, ``GetExtendedAgentCard``)."""

    #: Every interface: for requests not marked 1.x, and the extended card.
    full: AgentCard
    #: Without the gRPC interfaces, for requests marked ``A2A-Version: 1.x`` (``public_card``).
    same_origin: AgentCard
    #: ``full`` is served as the extended card too (it lists gRPC).
    extended: bool


def card_forms(card: AgentCard) -> CardForms:
    """The forms of ``card`` (which is left as it is). With gRPC interfaces the extended
    card is served, since it lists gRPC for a2a-sdk 1.x clients, who get the card
    without it: every form then says so (A2A CORE-CAP-003)."""
    full = AgentCard()
    full.CopyFrom(card)
    extended = any(i.protocol_binding == TRANSPORT_GRPC for i in card.supported_interfaces)
    if extended:
        full.capabilities.extended_agent_card = True
    return CardForms(full, public_card(full), extended)


#: What A2A 0.3's schema requires of a card and of each skill that A2A 1.0 has too: proto3
#: JSON leaves them out when empty (a proxy's skill whose upstream had no tags), and 0.3
#: readers then refuse the card.
_CARD_FIELDS: dict[str, Any] = {
    "name": "",
    "description": "",
    "version": "",
    "capabilities": {},
    "defaultInputModes": [],
    "defaultOutputModes": [],
    "skills": [],
}
_SKILL_FIELDS: dict[str, Any] = {"id": "", "name": "", "description": "", "tags": []}


def card_json(card: AgentCard, *, v0_3: bool = False) -> dict[str, Any]:
    """The card as JSON: 1.0's (with ``v0_3``, a2a-sdk's 0.3 fields beside it), every field
    0.3 requires present even when empty (``tests/server/test_card_schemas.py``)."""
    data: dict[str, Any] = agent_card_to_dict(card) if v0_3 else MessageToDict(card)
    for key, empty in _CARD_FIELDS.items():
        data.setdefault(key, copy.copy(empty))
    for skill in data["skills"]:
        for key, empty in _SKILL_FIELDS.items():
            skill.setdefault(key, copy.copy(empty))
    return data
