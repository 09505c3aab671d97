"""How to get in, said on the agent card: ``securitySchemes`` and the security
requirements, written from the configured scheme (A2A 1.0 §4.5; the card's 0.3 form gets
the same in its ``securitySchemes`` / ``security`` fields, which a2a-sdk renders).

=================  ======================================  ==============================
``--auth``         schemes declared                        requirements (any one)
=================  ======================================  ==============================
``oidc``           ``oidc`` (OpenID Connect, the issuer's   ``oidc``; ``bearer``
                   discovery URL), ``bearer`` (HTTP bearer,
                   JWT)
``api-key``        ``apiKey`` (header ``X-API-Key``),       ``apiKey``; ``bearer``
                   ``bearer`` (HTTP bearer)
``mtls``           ``mtls`` (mutual TLS)                    ``mtls``
=================  ======================================  ==============================

A client CA on a server of another scheme (``--tls-client-ca``) adds ``mtls`` to every
requirement: both are needed. The trusted header declares nothing: whoever sets it (the
proxy in front, or a program on the same machine) is not a client the card speaks to.
"""

from __future__ import annotations

from a2a.types import (
    AgentCard,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    MutualTlsSecurityScheme,
    OpenIdConnectSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
)

from trpc_bridge.server.auth.oidc import discovery_url
from trpc_bridge.server.auth.options import SecurityOptions

OIDC, BEARER, API_KEY, MTLS = "oidc", "bearer", "apiKey", "mtls"


def _schemes(security: SecurityOptions) -> tuple[dict[str, SecurityScheme], list[list[str]]]:
    schemes: dict[str, SecurityScheme] = {}
    alternatives: list[list[str]] = []
    if security.auth == "oidc":
        schemes[OIDC] = SecurityScheme(
            open_id_connect_security_scheme=OpenIdConnectSecurityScheme(
                open_id_connect_url=discovery_url(security.oidc_issuer),
                description="Access tokens of this OpenID provider (client credentials)",
            )
        )
        schemes[BEARER] = SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="Bearer",
                bearer_format="JWT",
                description=f"A JWT issued by {security.oidc_issuer}",
            )
        )
        alternatives = [[OIDC], [BEARER]]
    elif security.auth == "api-key":
        schemes[API_KEY] = SecurityScheme(
            api_key_security_scheme=APIKeySecurityScheme(
                location="header", name="X-API-Key", description="An API key of this server"
            )
        )
        schemes[BEARER] = SecurityScheme(
            http_auth_security_scheme=HTTPAuthSecurityScheme(
                scheme="Bearer", description="The same API key as a bearer token"
            )
        )
        alternatives = [[API_KEY], [BEARER]]
    if security.auth == "mtls" or security.tls_client_ca:
        schemes[MTLS] = SecurityScheme(
            mtls_security_scheme=MutualTlsSecurityScheme(
                description="A client certificate of the server's client CA"
            )
        )
        alternatives = [[*names, MTLS] for names in alternatives] or [[MTLS]]
    return schemes, alternatives


def declare_security(card: AgentCard, security: SecurityOptions) -> None:
    """Write ``security``'s schemes and requirements into ``card``."""
    schemes, alternatives = _schemes(security)
    for name, scheme in schemes.items():
        card.security_schemes[name].CopyFrom(scheme)
    for names in alternatives:
        requirement = SecurityRequirement()
        for name in names:
            requirement.schemes[name].SetInParent()  # no scopes
        card.security_requirements.append(requirement)
