"""TLS on both ports with certificates made by trustme: mutual TLS as the credential
(``--auth mtls``) on HTTP, A2A gRPC and AgentHost; certificates of another CA, or none,
refused by the handshake while the server keeps serving; the client verifies the server
(``--ca-file`` for a private CA)."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from typing import Any

import grpc
import httpx
import pytest
import pytest_asyncio
from a2a.types import a2a_pb2, a2a_pb2_grpc
from security_peers import ClientCert, Pki

from trpc_bridge.agents.scenarios import whoami
from trpc_bridge.cli.call import run_call
from trpc_bridge.client import RemoteAgent, RemoteAgentError
from trpc_bridge.events import AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.auth.mtls import certificate_identity
from trpc_bridge.server.auth.options import SecurityOptions
from trpc_bridge.v1 import agent_pb2, agent_pb2_grpc

pytestmark = pytest.mark.asyncio(loop_scope="module")

ALICE = "spiffe://example.org/ns/agents/sa/alice"


def _tls(pki: Pki, **more: Any) -> SecurityOptions:
    return SecurityOptions(tls_cert=str(pki.server_cert), tls_key=str(pki.server_key), **more)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def mtls_server(pki: Pki) -> AsyncIterator[BridgeServer]:
    security = _tls(pki, auth="mtls", tls_client_ca=str(pki.ca_pem))
    async with BridgeServer(whoami, ServerOptions(security=security)) as server:
        yield server


def _http(pki: Pki, cert: ClientCert | None) -> httpx.AsyncClient:
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    if cert is not None:
        context.load_cert_chain(str(cert.cert), str(cert.key))
    return httpx.AsyncClient(verify=context, timeout=30)


async def _jsonrpc(server: BridgeServer, pki: Pki, cert: ClientCert | None) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
    }
    async with _http(pki, cert) as http:
        response = await http.post(server.jsonrpc_url, json=body, headers={"A2A-Version": "1.0"})
    return response.text


def _channel(server: BridgeServer, pki: Pki, cert: ClientCert | None) -> grpc.aio.Channel:
    credentials = grpc.ssl_channel_credentials(
        root_certificates=pki.ca_pem.read_bytes(),
        private_key=cert.key_pem if cert else None,
        certificate_chain=cert.cert_pem if cert else None,
    )
    return grpc.aio.secure_channel(server.grpc_address, credentials)


async def _grpc(server: BridgeServer, pki: Pki, cert: ClientCert | None, door: str) -> str:
    async with _channel(server, pki, cert) as channel:
        if door == "a2a":
            stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
            request = a2a_pb2.SendMessageRequest()
            request.message.message_id = "m-g"
            request.message.parts.add().text = "hi"
            return str(await stub.SendMessage(request, timeout=30))
        host = agent_pb2_grpc.AgentHostStub(channel)  # type: ignore[no-untyped-call]
        return str([e async for e in host.Run(agent_pb2.AgentRequest(text="hi"), timeout=30)])


async def test_the_client_certificate_names_the_caller_on_every_port(
    mtls_server: BridgeServer, pki: Pki
) -> None:
    alice = pki.client(ALICE)
    assert f"user={ALICE}" in await _jsonrpc(mtls_server, pki, alice)
    assert f"user={ALICE}" in await _grpc(mtls_server, pki, alice, "a2a")
    assert f"user={ALICE}" in await _grpc(mtls_server, pki, alice, "agenthost")
    bob = pki.client("bob.agents.example.org")  # a DNS name when there is no URI
    assert "user=bob.agents.example.org" in await _jsonrpc(mtls_server, pki, bob)


@pytest.mark.parametrize("which", ["another CA", "no certificate"])
async def test_the_handshake_refuses_other_certificates(
    mtls_server: BridgeServer, pki: Pki, which: str
) -> None:
    cert = pki.client(ALICE, other_ca=True) if which == "another CA" else None
    with pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)):
        await _jsonrpc(mtls_server, pki, cert)
    for door in ("a2a", "agenthost"):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await _grpc(mtls_server, pki, cert, door)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    # The server keeps serving.
    assert f"user={ALICE}" in await _jsonrpc(mtls_server, pki, pki.client(ALICE))
    assert f"user={ALICE}" in await _grpc(mtls_server, pki, pki.client(ALICE), "a2a")


async def test_the_card_has_https_urls_and_the_mtls_scheme(
    mtls_server: BridgeServer, pki: Pki
) -> None:
    async with _http(pki, None) as http:  # the card needs no certificate... but TLS does
        with pytest.raises(httpx.HTTPError):
            await http.get(mtls_server.card_url)
    async with _http(pki, pki.client(ALICE)) as http:
        card = (await http.get(mtls_server.card_url)).json()
    assert all(
        i["url"].startswith("https://")
        for i in card["supportedInterfaces"]
        if i["protocolBinding"] != "GRPC"
    )
    assert card["securitySchemes"] == {
        "mtls": {
            "mtlsSecurityScheme": {"description": "A client certificate of the server's client CA"}
        }
    }
    assert card["securityRequirements"] == [{"schemes": {"mtls": {}}}]


async def test_which_name_of_a_certificate_is_the_user(pki: Pki) -> None:
    def named(*identities: str, common_name: str = "") -> str:
        cert = pki.client(*identities, common_name=common_name)
        return certificate_identity(
            cert.cert_pem.decode().split("-----END CERTIFICATE-----")[0]
            + "-----END CERTIFICATE-----\n"
        )

    assert named("dns.example.org", ALICE) == ALICE  # a URI first (SPIFFE)
    assert named("carol@example.org", "dns.example.org") == "dns.example.org"
    assert named("carol@example.org") == "carol@example.org"
    assert named(common_name="dave") == "dave"  # no names at all: the subject's CN
    assert named() == ""  # names no one: 403 (authenticator.checked_user_id)


# --- the client verifies the server ------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tls_server(pki: Pki) -> AsyncIterator[BridgeServer]:
    async with BridgeServer(whoami, ServerOptions(security=_tls(pki))) as server:
        yield server


@pytest.mark.parametrize("transport", ["jsonrpc", "rest", "grpc"])
async def test_remote_agent_verifies_with_a_private_ca(
    tls_server: BridgeServer, pki: Pki, transport: str
) -> None:
    async with await RemoteAgent.connect(
        tls_server.base_url, transport=transport, ca_file=str(pki.ca_pem)
    ) as agent:
        texts = [str(e) async for e in agent.run(AgentRequest(text="hi", user_id="erin"))]
    assert any("user=erin" in t for t in texts)


async def test_an_unknown_ca_is_refused(tls_server: BridgeServer) -> None:
    with pytest.raises(RemoteAgentError):
        await RemoteAgent.connect(tls_server.base_url)  # the system's CAs: not trustme's


async def test_call_with_ca_file(
    tls_server: BridgeServer, pki: Pki, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await run_call(tls_server.base_url, "hi", user="frank", ca_file=str(pki.ca_pem))
    assert code == 0 and "user=frank" in capsys.readouterr().out
    assert await run_call(tls_server.base_url, "hi") == 1
    assert "certificate" in capsys.readouterr().err.lower()
