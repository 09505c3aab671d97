"""The operator's routes under authentication other than the trusted header
(``docs/security.md``, "Operations routes"): ``/metrics`` on the HTTP port asks for the
server's credentials unless declared public; the trace view's spans ask for them; its OTLP
receiver takes spans from a loopback peer without any, and from anywhere else only from an
authenticated caller. Loopback peers are real TCP connections; a peer on another machine
is the same application called in-process with another client address (this machine may
reach no other address)."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from opentelemetry.sdk.metrics import MeterProvider
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from trpc_bridge.agents.scenarios import whoami
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.auth.options import SecurityOptions
from trpc_bridge.server.options import OpsOptions
from trpc_bridge.telemetry.logs import FIELDS
from trpc_bridge.telemetry.span_buffer import SpanBuffer

from .conftest import key_file

KEY = "k-ops-0123456789abcdef0123456789abcdef"
#: A peer on another machine (TEST-NET-3: documentation only, never reached).
ELSEWHERE = ("203.0.113.9", 40000)
PROTOBUF = {"content-type": "application/x-protobuf"}


def _export(trace_id: bytes) -> bytes:
    """One OTLP/HTTP export holding one span of ``trace_id``."""
    span = Span(trace_id=trace_id, span_id=os.urandom(8), name="upstream-work")
    spans = ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])
    body: bytes = ExportTraceServiceRequest(resource_spans=[spans]).SerializeToString()
    return body


def _options(tmp_path: Path, *, metrics_public: bool = False, **security: object) -> ServerOptions:
    registry = CollectorRegistry(auto_describe=True)
    provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=registry)])
    ops = OpsOptions(
        meter_provider=provider,
        prometheus=registry,
        metrics_path=True,
        metrics_public=metrics_public,
        span_buffer=SpanBuffer(),
    )
    if not security:
        security = {"auth": "api-key", "api_keys": str(key_file(tmp_path / "keys", {KEY: "ops"}))}
    return ServerOptions(
        grpc_port=None,
        ops=ops,
        security=SecurityOptions(**security),  # type: ignore[arg-type]
    )


@contextlib.asynccontextmanager
async def _peer(
    server: BridgeServer, client: tuple[str, int] = ELSEWHERE
) -> AsyncIterator[httpx.AsyncClient]:
    """The server's application, called as from ``client``."""
    transport = httpx.ASGITransport(app=server.starlette_app(), client=client)
    async with httpx.AsyncClient(transport=transport, base_url="http://bridge.test") as http:
        yield http


async def test_metrics_and_spans_follow_the_api_key(tmp_path: Path) -> None:
    trace_id = os.urandom(16)
    spans_path = f"/playground/traces/{trace_id.hex()}"
    async with (
        BridgeServer(whoami, _options(tmp_path)) as server,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http_port}", timeout=30) as http,
    ):
        keyed = {"x-api-key": KEY}
        # /metrics asks for the key, as every route does; a scraper sends it as a bearer.
        refused = await http.get("/metrics")
        assert refused.status_code == 401 and "www-authenticate" in refused.headers
        scraped = await http.get("/metrics", headers={"authorization": f"Bearer {KEY}"})
        assert scraped.status_code == 200
        names = {family.name for family in text_string_to_metric_families(scraped.text)}
        assert "http_server_request_duration_seconds" in names
        # The probes stay public.
        assert (await http.get("/healthz")).status_code == 200

        # A loopback peer exports spans without credentials (an upstream on this machine).
        exported = await http.post("/v1/traces", content=_export(trace_id), headers=PROTOBUF)
        assert exported.status_code == 200
        # Reading them is a route like the others.
        assert (await http.get(spans_path)).status_code == 401
        shown = await http.get(spans_path, headers=keyed)
        assert [s["name"] for s in shown.json()["spans"]] == ["upstream-work"]

        # From another machine, the receiver asks for the key like every route.
        async with _peer(server) as remote:
            other = os.urandom(16)
            anonymous = await remote.post("/v1/traces", content=_export(other), headers=PROTOBUF)
            assert anonymous.status_code == 401
            assert "www-authenticate" in anonymous.headers
            assert (await http.get(f"/playground/traces/{other.hex()}", headers=keyed)).json() == {
                "spans": []
            }
            with_key = await remote.post(
                "/v1/traces", content=_export(other), headers={**PROTOBUF, **keyed}
            )
            assert with_key.status_code == 200
            assert (await remote.get("/metrics")).status_code == 401
            assert (await remote.get(spans_path)).status_code == 401
        # A dual-stack socket's loopback peer is loopback too.
        async with _peer(server, ("::ffff:127.0.0.1", 40000)) as mapped:
            sent = await mapped.post(
                "/v1/traces", content=_export(os.urandom(16)), headers=PROTOBUF
            )
            assert sent.status_code == 200


async def test_metrics_declared_public(tmp_path: Path) -> None:
    async with (
        BridgeServer(whoami, _options(tmp_path, metrics_public=True)) as server,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http_port}", timeout=30) as http,
    ):
        assert (await http.get("/metrics")).status_code == 200
        # Public means readable: not writable, and nothing else opens with it.
        assert (await http.post("/metrics")).status_code == 401
        assert (await http.get(f"/playground/traces/{'ab' * 16}")).status_code == 401


@pytest.mark.parametrize(
    ("user", "status"), [(None, 403), ("gateway-user", 200)], ids=["no user", "a user"]
)
async def test_behind_a_trusted_proxy_spans_need_a_named_user(
    tmp_path: Path, user: str | None, status: int
) -> None:
    """``--trust-user-header``: a caller on another machine that no authenticating proxy
    named (no ``X-User-ID``) exports nothing; one it named does."""
    options = _options(tmp_path, trust_user_header=True)
    async with BridgeServer(whoami, options) as server:
        headers = dict(PROTOBUF) if user is None else {**PROTOBUF, "x-user-id": user}
        async with _peer(server) as remote:
            answer = await remote.post(
                "/v1/traces", content=_export(os.urandom(16)), headers=headers
            )
            assert answer.status_code == status, answer.text


@pytest.mark.parametrize(
    "forwarded",
    ["127.0.0.1", "203.0.113.9", "127.0.0.1, 203.0.113.9"],
    ids=["self", "other", "chain"],
)
async def test_a_forwarded_request_is_no_loopback_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forwarded: str
) -> None:
    """A request naming a client in ``X-Forwarded-For`` came through a proxy: on a real
    listener, from a loopback TCP peer, it asks for the key like any caller elsewhere,
    even with ``FORWARDED_ALLOW_IPS=*`` in the environment (which would otherwise let
    uvicorn take the peer's address from the header: any caller could claim 127.0.0.1)."""
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")
    async with (
        BridgeServer(whoami, _options(tmp_path)) as server,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http_port}", timeout=30) as http,
    ):
        direct = await http.post("/v1/traces", content=_export(os.urandom(16)), headers=PROTOBUF)
        assert direct.status_code == 200
        headers = {**PROTOBUF, "x-forwarded-for": forwarded}
        proxied = await http.post("/v1/traces", content=_export(os.urandom(16)), headers=headers)
        assert proxied.status_code == 401, proxied.text
        assert "www-authenticate" in proxied.headers


@pytest.mark.parametrize(
    ("trusted", "named"),
    [("", "127.0.0.1"), ("10.9.8.7, 127.0.0.0/8", "203.0.113.9")],
    ids=["default", "a trusted proxy"],
)
async def test_only_a_named_proxy_names_the_caller_in_the_log(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    trusted: str,
    named: str,
) -> None:
    """``--forwarded-allow-ips``: for a peer it names, the access log shows the caller in
    ``X-Forwarded-For``; by default the TCP peer, whatever the environment's
    ``FORWARDED_ALLOW_IPS`` says. Either way the request is no loopback caller's."""
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")
    options = _options(tmp_path)
    options = dataclasses.replace(
        options,
        ops=dataclasses.replace(options.ops, access_log=True),
        security=dataclasses.replace(options.security, forwarded_allow_ips=trusted),
    )
    caplog.set_level(logging.INFO, logger="trpc_bridge.access")
    async with (
        BridgeServer(whoami, options) as server,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.http_port}", timeout=30) as http,
    ):
        headers = {**PROTOBUF, "x-forwarded-for": "203.0.113.9"}
        answer = await http.post("/v1/traces", content=_export(os.urandom(16)), headers=headers)
        assert answer.status_code == 401, answer.text
    [line] = [
        getattr(record, FIELDS)
        for record in caplog.records
        if record.name == "trpc_bridge.access"
        and getattr(record, FIELDS)["url.path"] == "/v1/traces"
    ]
    assert line["client.address"] == named
