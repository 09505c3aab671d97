"""TLS on both ports with certificates made by trustme: mutual TLS as the credential
(``--auth mtls``) on HTTP, A2A gRPC and AgentHost; certificates of another CA, or none,
refused by the handshake while the server keeps serving; the client verifies the server
(``--ca-file`` for a private CA) and presents its own certificate (``--cert/--key``:
``call``, ``RemoteAgent`` on JSON-RPC, REST and gRPC, and ``proxy`` upstream)."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import pytest_asyncio
from a2a.types import a2a_pb2, a2a_pb2_grpc
from cryptography.hazmat.primitives import serialization
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from security_peers import ClientCert, Pki
from typer.testing import CliRunner

from trpc_bridge.agents.scenarios import whoami
from trpc_bridge.cli import app
from trpc_bridge.cli.call import run_call
from trpc_bridge.cli.proxy import run_proxy
from trpc_bridge.client import ClientTls, RemoteAgent, RemoteAgentError
from trpc_bridge.client.card import TRANSPORTS
from trpc_bridge.events import AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.auth.mtls import certificate_identity
from trpc_bridge.server.auth.options import SecurityOptions
from trpc_bridge.server.options import OpsOptions
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


async def test_http_metrics_name_the_https_scheme(pki: Pki) -> None:
    """``http.server.request.duration`` says ``url.scheme=https`` for requests on a TLS
    port (the scheme the request came by, not a constant)."""
    registry = CollectorRegistry(auto_describe=True)
    provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=registry)])
    ops = OpsOptions(meter_provider=provider, prometheus=registry, metrics_path=True)
    options = ServerOptions(security=_tls(pki, trust_user_header=True), ops=ops)
    async with BridgeServer(whoami, options) as server:
        await _jsonrpc(server, pki, None)
    scraped = generate_latest(registry).decode()
    [family] = [
        f
        for f in text_string_to_metric_families(scraped)
        if f.name == "http_server_request_duration_seconds"
    ]
    schemes = {s.labels["url_scheme"] for s in family.samples if s.name.endswith("_count")}
    assert schemes == {"https"}


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
    described = "A client certificate of the server's client CA"
    assert card["securitySchemes"] == {  # the merged card: 1.0 shape and 0.3 fields
        "mtls": {
            "mtlsSecurityScheme": {"description": described},
            "type": "mutualTLS",
            "description": described,
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
        tls_server.base_url, transport=transport, tls=ClientTls(str(pki.ca_pem))
    ) as agent:
        texts = [str(e) async for e in agent.run(AgentRequest(text="hi", user_id="erin"))]
    assert any("user=erin" in t for t in texts)


async def test_an_unknown_ca_is_refused(tls_server: BridgeServer) -> None:
    with pytest.raises(RemoteAgentError):
        await RemoteAgent.connect(tls_server.base_url)  # the system's CAs: not trustme's


async def test_call_with_ca_file(
    tls_server: BridgeServer, pki: Pki, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await run_call(tls_server.base_url, "hi", user="frank", tls=ClientTls(str(pki.ca_pem)))
    assert code == 0 and "user=frank" in capsys.readouterr().out
    assert await run_call(tls_server.base_url, "hi") == 1
    assert "certificate" in capsys.readouterr().err.lower()


# --- the client presents its certificate ------------------------------------------------


def _client_tls(pki: Pki, cert: ClientCert, *, one_file: bool = False) -> ClientTls:
    if not one_file:
        return ClientTls(str(pki.ca_pem), str(cert.cert), str(cert.key))
    both = cert.cert.with_suffix(".both.pem")  # the chain, then the key (as curl --cert)
    both.write_bytes(cert.cert_pem + cert.key_pem)
    return ClientTls(str(pki.ca_pem), str(both))


def _text(events: list[Any]) -> str:
    return " ".join(str(e) for e in events)


@pytest.mark.parametrize("one_file", [False, True], ids=["cert+key", "one file"])
@pytest.mark.parametrize("transport", ["jsonrpc", "rest", "grpc"])
async def test_remote_agent_presents_its_certificate(
    mtls_server: BridgeServer, pki: Pki, transport: str, one_file: bool
) -> None:
    tls = _client_tls(pki, pki.client(ALICE), one_file=one_file)
    async with await RemoteAgent.connect(
        mtls_server.base_url, transport=transport, tls=tls
    ) as agent:
        assert agent.endpoint.binding == TRANSPORTS[transport]
        for stream in (True, False):
            events = [e async for e in agent.run(AgentRequest(text="hi"), stream=stream)]
            assert f"user={ALICE}" in _text(events), _text(events)


@pytest.mark.parametrize("which", ["another CA", "no certificate"])
async def test_remote_agent_with_a_certificate_the_server_refuses(
    mtls_server: BridgeServer, pki: Pki, which: str
) -> None:
    tls = (
        _client_tls(pki, pki.client(ALICE, other_ca=True))
        if which == "another CA"
        else ClientTls(str(pki.ca_pem))
    )
    with pytest.raises(RemoteAgentError) as refused:
        await RemoteAgent.connect(mtls_server.base_url, tls=tls)
    assert "client certificate" in str(refused.value), str(refused.value)


async def test_call_with_cert_and_key(mtls_server: BridgeServer, pki: Pki) -> None:
    alice, runner = pki.client(ALICE), CliRunner()

    def call(*flags: str) -> Any:
        argv = ["call", mtls_server.base_url, "hi", "--ca-file", str(pki.ca_pem), *flags]
        return asyncio.to_thread(runner.invoke, app, argv)

    for transport in ("jsonrpc", "rest", "grpc"):
        ok = await call(
            "--cert", str(alice.cert), "--key", str(alice.key), "--transport", transport
        )
        assert ok.exit_code == 0 and f"user={ALICE}" in ok.output, ok.output
    other = pki.client(ALICE, other_ca=True)
    refused = await call("--cert", str(other.cert), "--key", str(other.key))
    assert refused.exit_code == 1 and refused.output.startswith("error: "), refused.output
    assert "BEGIN" not in refused.output


async def test_unusable_certificate_files_are_one_line_naming_the_file(
    pki: Pki, tmp_path: Path
) -> None:
    alice, runner = pki.client(ALICE), CliRunner()
    encrypted = tmp_path / "encrypted.key"
    private = serialization.load_pem_private_key(alice.key_pem, None)
    encrypted.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    cases = {
        "missing": ["--cert", str(tmp_path / "nope.pem")],
        "a key of another certificate": ["--cert", str(alice.cert), "--key", str(pki.server_key)],
        "encrypted": ["--cert", str(alice.cert), "--key", str(encrypted)],
        "a key without its certificate": ["--key", str(alice.key)],
    }
    for case, flags in cases.items():
        argv = ["call", "https://127.0.0.1:1", "hi", *flags]
        result = await asyncio.to_thread(runner.invoke, app, argv)
        assert result.exit_code == 2, (case, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (case, result.output)
        assert "PRIVATE KEY" not in result.output


async def test_proxy_presents_its_own_certificate_upstream(
    mtls_server: BridgeServer, pki: Pki
) -> None:
    """The upstream (``--auth mtls``) sees the proxy's certificate, whatever user the
    proxy's caller names; the proxy itself is a loopback server (trusted header)."""
    proxy_id = "spiffe://example.org/ns/agents/sa/proxy"
    lines: list[str] = []
    options = ServerOptions(port=0, grpc_port=None)
    tls = _client_tls(pki, pki.client(proxy_id))
    proxy = asyncio.create_task(run_proxy(mtls_server.base_url, options, lines.append, tls=tls))
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
    }
    try:
        while not any(line.startswith("card") for line in lines):
            assert not proxy.done(), proxy.exception()
            await asyncio.sleep(0.01)
        urls = {line.split()[0]: line.split()[1] for line in lines}
        jsonrpc = urls["card"].split("/.well-known")[0]
        async with httpx.AsyncClient(timeout=30) as http:
            answer = await http.post(
                jsonrpc, json=body, headers={"A2A-Version": "1.0", "X-User-ID": "carol"}
            )
    finally:
        proxy.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await proxy
    assert f"user={proxy_id}" in answer.text, answer.text
    assert any(line.startswith("upstream") for line in lines)
