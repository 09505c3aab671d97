"""Debian's headless Chromium driven by Playwright's Python package, and a reader of what
the playground page rendered for a run.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` with a fresh
profile and every background network feature off. Without that binary the calling test
is skipped, saying so.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Locator, Page, async_playwright

CHROMIUM = Path("/usr/bin/chromium")
SKIP_NO_CHROMIUM = (
    f"{CHROMIUM} not found: the playground browser test needs Debian's chromium package "
    "(`make test` installs it with apt-get when run as root)"
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Screenshots for a person to look at (docs/playground.png is one of them).
SCREENSHOTS = Path(__file__).resolve().parents[2] / "build"
#: Long enough for a cold Chromium on a busy 2-core machine; a hang still fails the test.
TIMEOUT_MS = 60_000


@dataclass
class RenderedRun:
    """One run as the page shows it."""

    status: str
    reasoning: list[str]
    #: (tool name, arguments, result), arguments and result parsed from the shown JSON.
    tools: list[tuple[str, Any, Any]]
    answers: list[str]
    code: list[str]
    output: list[str]
    state_ops: list[str]
    errors: list[str]
    trace: str
    trace_id: str | None


@dataclass
class Playground:
    page: Page
    #: Uncaught script errors and console errors: a test ends by asserting there are none.
    errors: list[str] = field(default_factory=list)

    async def open(self, url: str) -> None:
        await self.page.goto(url)
        await self.page.locator(".agent-name").wait_for()

    def run(self, index: int) -> Locator:
        return self.page.locator("#transcript .run").nth(index)

    async def ask(self, text: str, *, user: str | None = None) -> Locator:
        """Type ``text`` and send it with the keyboard (Enter); the finished run."""
        if user is not None:
            await self.set_user(user)
        runs = await self.page.locator("#transcript .run").count()
        await self.page.locator("#prompt").fill(text)
        await self.page.locator("#prompt").press("Enter")
        run = self.run(runs)
        await run.and_(self.page.locator("[aria-busy=false]")).wait_for()
        return run

    async def open_settings(self) -> None:
        settings = self.page.locator("details.settings")
        if not await settings.evaluate("d => d.open"):
            await settings.locator("summary").click()

    async def set_user(self, user: str) -> None:
        await self.open_settings()
        await self.page.locator("#user-id").fill(user)

    async def new_thread(self) -> None:
        await self.open_settings()
        await self.page.locator("#new-thread").click()

    async def thread_id(self) -> str:
        return await self.page.locator("#thread-id").text_content() or ""

    async def screenshot(self, name: str) -> Path:
        """The whole page, through a window as tall as the page: a full-page capture
        would leave the sticky message box over the last run."""
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / name
        size = self.page.viewport_size
        assert size is not None
        height = await self.page.evaluate("Math.ceil(document.body.getBoundingClientRect().height)")
        await self.page.set_viewport_size({"width": size["width"], "height": height})
        await self.page.screenshot(path=str(path))
        await self.page.set_viewport_size(size)
        return path


async def read_run(run: Locator) -> RenderedRun:
    tools = []
    for tool in await run.locator(".step.tool").all():
        name = await tool.locator(".tool-name").inner_text()
        args = json.loads(await tool.locator(".tool-args").inner_text())
        result_node = tool.locator(".tool-result")
        result = (
            json.loads(await result_node.inner_text()) if await result_node.is_visible() else None
        )
        tools.append((name, args, result))
    trace_id = await run.get_attribute("data-trace-id")
    return RenderedRun(
        status=await run.get_attribute("data-status") or "",
        reasoning=await run.locator(".reasoning-text").all_inner_texts(),
        tools=tools,
        answers=await run.locator(".answer-text").all_inner_texts(),
        code=await run.locator(".code-src").all_inner_texts(),
        output=await run.locator(".code-output").all_inner_texts(),
        state_ops=await run.locator(".state-ops li").all_inner_texts(),
        errors=await run.locator(".step.error").all_inner_texts(),
        trace=await run.locator(".trace").inner_text(),
        trace_id=trace_id,
    )


@contextlib.asynccontextmanager
async def playground_browser(width: int = 900, height: int = 1000) -> AsyncIterator[Playground]:
    """A fresh headless Chromium with one page; skips the test without Chromium."""
    if not CHROMIUM.exists():
        pytest.skip(SKIP_NO_CHROMIUM)
    with tempfile.TemporaryDirectory(prefix="playground-chromium-") as profile:
        async with async_playwright() as playwright:
            context = await playwright.chromium.launch_persistent_context(
                profile,
                executable_path=str(CHROMIUM),
                headless=True,
                args=FLAGS,
                viewport={"width": width, "height": height},
            )
            try:
                context.set_default_timeout(TIMEOUT_MS)
                page = context.pages[0] if context.pages else await context.new_page()
                playground = Playground(page)
                page.on("pageerror", lambda exc: playground.errors.append(str(exc)))
                page.on(
                    "console",
                    lambda msg: playground.errors.append(msg.text) if msg.type == "error" else None,
                )
                yield playground
            finally:
                await context.close()
