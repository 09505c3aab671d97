"""Who is trusted where: a loopback bind takes ``X-User-ID`` by default (``make run``), any
other bind refuses to start without a scheme or ``--trust-user-header`` (one line naming
both), flags that cannot go together are one line each; the API key file."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from agui_checks import run_input
from security_peers import Pki

from trpc_bridge.agents.scenarios import whoami
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.auth.api_keys import ApiKeyFile, ApiKeyFileError, parse_key_file
from trpc_bridge.server.auth.options import SecurityConfigError, SecurityOptions
from trpc_bridge.server.auth.presented import Presented

from .conftest import key_file

CLI = Path(sys.executable).parent / "trpc-bridge"


def _serve(*flags: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), "serve", "--port", "0", "--grpc-port", "0", *flags],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_public_bind_without_a_scheme_refuses_to_start() -> None:
    assert _one_line(_serve("--host", "0.0.0.0")) == (
        "error: --host 0.0.0.0 is reachable from other machines: choose an authentication "
        "scheme (--auth oidc|api-key|mtls) or --trust-user-header (behind an authenticating "
        "proxy that sets X-User-ID)"
    )
    assert _one_line(_serve("--host", "::")).startswith("error: --host :: is reachable")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--auth", "kerberos"], "--auth 'kerberos': choose one of none, oidc, api-key, mtls"),
        (["--auth", "oidc"], "--auth oidc needs --oidc-issuer URL"),
        (
            ["--auth", "oidc", "--oidc-issuer", "http://idp.example.com"],
            "--oidc-issuer 'http://idp.example.com': an https URL is required "
            "(http only on loopback)",
        ),
        (["--auth", "api-key"], "--auth api-key needs --api-keys FILE"),
        (["--auth", "mtls"], "--auth mtls needs --tls-client-ca FILE (and --tls-cert, --tls-key)"),
        (["--tls-cert", "x.pem"], "--tls-cert and --tls-key go together"),
        (
            ["--auth", "api-key", "--api-keys", "k", "--trust-user-header"],
            "--auth api-key and --trust-user-header both say who the caller is: choose one",
        ),
        (
            ["--forwarded-allow-ips", "*"],
            "--forwarded-allow-ips '*' would let any caller name itself in the logs: "
            "list the reverse proxies' addresses or networks",
        ),
        (
            ["--forwarded-allow-ips", "10.0.0.5, proxy.local"],
            "--forwarded-allow-ips: 'proxy.local' is not an IP address or network "
            "(e.g. 10.0.0.5 or 10.0.0.0/24)",
        ),
    ],
)
def test_flags_that_cannot_be_served(flags: list[str], message: str) -> None:
    assert _one_line(_serve(*flags)) == f"error: {message}"


def test_the_environment_sets_the_flags(tmp_path: Path) -> None:
    line = _one_line(_serve(env={"TRPC_BRIDGE_AUTH": "api-key"}))
    assert line == "error: --auth api-key needs --api-keys FILE"
    missing = tmp_path / "missing.txt"
    line = _one_line(_serve("--auth", "api-key", "--api-keys", str(missing)))
    assert line.startswith(f"error: cannot use the API key file {missing}")


def test_a_bad_tls_file_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pem"
    bad.write_text("not a certificate")
    line = _one_line(_serve("--tls-cert", str(bad), "--tls-key", str(bad)))
    assert line.startswith(f"error: --tls-cert {bad} / --tls-key {bad}: cannot be loaded")


async def test_the_trusted_header_on_loopback_and_when_asked() -> None:
    for security in (SecurityOptions(), SecurityOptions(trust_user_header=True)):
        async with (
            BridgeServer(whoami, ServerOptions(security=security)) as server,
            httpx.AsyncClient() as http,
        ):
            answer = await http.post(
                server.agui_url, json=run_input(), headers={"X-User-ID": "ann"}
            )
        assert "user=ann" in answer.text


def test_a_library_server_refuses_a_public_bind_too() -> None:
    with pytest.raises(SecurityConfigError, match="--trust-user-header"):
        BridgeServer(whoami, ServerOptions(host="0.0.0.0"))


async def test_mtls_with_a_trusted_header_behind_a_proxy(pki: Pki) -> None:
    """The authenticating-proxy recipe: only holders of a client certificate (the proxy)
    connect, and the header they set names the user."""
    security = SecurityOptions(
        trust_user_header=True,
        tls_cert=str(pki.server_cert),
        tls_key=str(pki.server_key),
        tls_client_ca=str(pki.ca_pem),
    )
    proxy = pki.client("proxy.example.org")
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    context.load_cert_chain(str(proxy.cert), str(proxy.key))
    async with (
        BridgeServer(whoami, ServerOptions(security=security)) as server,
        httpx.AsyncClient(verify=context) as http,
    ):
        answer = await http.post(server.agui_url, json=run_input(), headers={"X-User-ID": "gil"})
        card = (await http.get(server.card_url)).json()
    assert "user=gil" in answer.text
    assert card["securityRequirements"] == [{"schemes": {"mtls": {}}}]


# --- the API key file ---------------------------------------------------------------------


def test_key_file_lines(tmp_path: Path) -> None:
    digest = "sha256:" + "ab" * 32
    assert parse_key_file(f"# keys\n\nalice {digest}  # laptop\n", "k") == {"ab" * 32: "alice"}
    for text, reason in [
        ("alice", "k:1: expected '<user-id> sha256:<hex>'"),
        ("alice md5:00", "k:1: expected '<user-id> sha256:<hex>'"),
        ("alice sha256:xyz", "k:1: the digest is not 64 hex digits"),
        (f"a {digest}\nb {digest}", "k:2: the same key is listed twice"),
    ]:
        with pytest.raises(ApiKeyFileError, match=reason):
            parse_key_file(text, "k")


async def test_a_broken_key_file_keeps_the_last_keys(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = key_file(tmp_path / "keys.txt", {"key-one-0123456789": "ann"})
    keys = ApiKeyFile(path)
    presented = Presented((("x-api-key", "key-one-0123456789"),))
    assert (await keys.authenticate(presented)).user_id == "ann"
    path.write_text("garbage\n")
    assert (await keys.authenticate(presented)).user_id == "ann"
    assert (await keys.authenticate(presented)).user_id == "ann"
    errors = [r for r in caplog.records if "not reloaded" in r.getMessage()]
    assert len(errors) == 1  # said once per version of the file
    assert "key-one" not in caplog.text
