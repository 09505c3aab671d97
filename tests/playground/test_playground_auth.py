"""The playground in a real browser (headless Debian Chromium) against a bridge that
authenticates: ``--auth api-key`` (the card's ``X-API-Key`` header) and ``--auth oidc``
with a real OpenID provider (a bearer token). Without a credential a run says
"Authentication required" and what to paste; with one, the run and its trace view work,
as the user the credential names. The credential goes in headers only: never in a URL,
``localStorage``, ``sessionStorage`` or a cookie, and a reload forgets it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from playwright.async_api import Request
from security_peers import OidcPeer

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.auth.api_keys import key_digest
from trpc_bridge.server.auth.options import SecurityOptions
from trpc_bridge.server.options import OpsOptions
from trpc_bridge.telemetry.span_buffer import SpanBuffer

from .browser import Playground, playground_browser, read_run

KEY = "pk-playground-0123456789abcdef"
AUDIENCE = "https://bridge.test/playground"


class RecordingAgent:
    """The demo agent, every request kept (whose user it ran as)."""

    def __init__(self) -> None:
        self._demo = demo_agent()
        self.name, self.description = self._demo.name, self._demo.description
        self.skills = self._demo.skills
        self.requests: list[AgentRequest] = []

    async def run(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        self.requests.append(request)
        async for event in self._demo.run(request):
            yield event


def _options(security: SecurityOptions) -> ServerOptions:
    provider = TracerProvider()
    buffer = SpanBuffer()  # the trace view's spans
    provider.add_span_processor(buffer)
    return ServerOptions(
        grpc_port=None,
        tracer_provider=provider,
        ops=OpsOptions(span_buffer=buffer),
        security=security,
    )


class Sent:
    """The page's requests to the server: their URLs and credential headers."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []

    def __call__(self, request: Request) -> None:
        self.requests.append((request.url, request.headers))

    def with_path(self, part: str) -> list[dict[str, str]]:
        return [headers for url, headers in self.requests if part in url]


def _unexpected(errors: list[str]) -> list[str]:
    """Console errors other than Chromium's line for each refused request."""
    return [e for e in errors if "status of 401" not in e]


async def _nothing_kept(playground: Playground, secret: str) -> None:
    page = playground.page
    kept = await page.evaluate(
        "() => [localStorage.length, sessionStorage.length, document.cookie, location.href]"
    )
    assert kept[:3] == [0, 0, ""], kept
    assert secret not in kept[3]


async def test_api_key_asked_for_then_sent(tmp_path: Path) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text(f"alice {key_digest(KEY)}\n")
    agent = RecordingAgent()
    options = _options(SecurityOptions(auth="api-key", api_keys=str(keys)))
    async with BridgeServer(agent, options) as server, playground_browser() as playground:
        sent = Sent()
        playground.page.on("request", sent)
        page = playground.page
        await playground.open(server.playground_url)
        label = page.locator("#credential-label")
        assert await label.text_content() == "API key, sent as X-API-Key"
        assert await page.locator("#user-row").is_hidden()

        # No key: the run says what is wrong and what to do, and opens the settings.
        refused = await read_run(await playground.ask("weather in Paris"))
        assert refused.status == "error" and refused.trace == "no trace: the run was refused"
        assert refused.errors == [
            "Error: Authentication required: an API key is required (X-API-Key). Paste your "
            "API key in the settings above (“API key, sent as X-API-Key”)."
        ]
        assert await page.locator("#credential").is_visible()
        assert agent.requests == []
        await playground.screenshot("playground-auth-required.png")

        # A wrong key: refused too, and the page never shows what was typed.
        await page.locator("#credential").fill("pk-wrong-key")
        wrong = await read_run(await playground.ask("weather in Paris"))
        assert wrong.status == "error" and "Authentication required" in wrong.errors[0]
        assert "pk-wrong-key" not in await page.locator("#transcript").inner_text()

        # The key: the run works, as the user the key file names, and its trace is drawn.
        await page.locator("#credential").fill(KEY)
        run = await playground.ask("weather in Paris")
        shown = await read_run(run)
        assert shown.status == "finished" and shown.answers == ["It is 14°C in Paris."]
        assert [r.user_id for r in agent.requests] == ["alice"]
        await run.locator(".trace-view .span-row[data-kind=SERVER]").wait_for()

        # Sent in the card's header on every call after it was pasted, never in a URL.
        assert all(KEY not in url for url, _ in sent.requests)
        agui = sent.with_path("/agui")
        assert [h.get("x-api-key") for h in agui] == [None, "pk-wrong-key", KEY]
        assert all("x-user-id" not in h and "authorization" not in h for h in agui)
        traces = sent.with_path("/playground/traces/")
        assert traces and all(h.get("x-api-key") == KEY for h in traces)
        await _nothing_kept(playground, KEY)

        # A reload forgets it.
        await page.reload()
        await page.locator(".agent-name").wait_for()
        assert await page.locator("#credential").input_value() == ""
        await _nothing_kept(playground, KEY)
        assert _unexpected(playground.errors) == []


async def test_bearer_token_of_the_openid_provider() -> None:
    with OidcPeer.start(audience=AUDIENCE) as idp:
        token = await asyncio.to_thread(idp.token, "bob")
        agent = RecordingAgent()
        security = SecurityOptions(auth="oidc", oidc_issuer=idp.issuer, audience=AUDIENCE)
        async with (
            BridgeServer(agent, _options(security)) as server,
            playground_browser() as playground,
        ):
            sent = Sent()
            playground.page.on("request", sent)
            page = playground.page
            await playground.open(server.playground_url)
            assert (
                await page.locator("#credential-label").text_content()
                == "Bearer token, sent as Authorization: Bearer"
            )
            refused = await read_run(await playground.ask("weather in Paris"))
            assert refused.errors[0].startswith("Error: Authentication required: ")
            await page.locator("#credential").fill(token)
            run = await playground.ask("weather in Paris")
            assert (await read_run(run)).status == "finished"
            await run.locator(".trace-view .span-row[data-kind=SERVER]").wait_for()
            assert [r.user_id for r in agent.requests] == ["bob"]
            calls = sent.with_path("/agui") + sent.with_path("/playground/traces/")
            assert calls[1:] and all(h["authorization"] == f"Bearer {token}" for h in calls[1:])
            assert all(token not in url for url, _ in sent.requests)
            await _nothing_kept(playground, token)
            assert _unexpected(playground.errors) == []


async def test_without_authentication_the_page_is_as_before() -> None:
    """A card that declares no scheme (the trusted header on loopback): the user id field,
    no credential field."""
    async with (
        BridgeServer(RecordingAgent(), _options(SecurityOptions())) as server,
        playground_browser() as playground,
    ):
        await playground.open(server.playground_url)
        page = playground.page
        assert await page.locator("#credential-row").is_hidden()
        await playground.open_settings()
        assert await page.locator("#user-id").is_visible()
        assert await page.locator("#settings-title").inner_text() == "Thread and user"
        assert playground.errors == []
