"""The playground in a real browser (headless Debian Chromium) against a bridge serving
Python agents: type, wait, read what the page rendered.

The server runs in the test's event loop with an in-memory tracer provider, so the trace
id the page shows can be compared with the SERVER span the bridge recorded. The agent
routes each prompt to the demo agent or to one of the interop scenarios, and records
every request, so the thread (A2A context id) and the user id field can be checked
where they arrive.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from trpc_bridge.agent import Agent, FunctionAgent, Skill
from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.agents.scenarios import SCRIPTS, ScenarioAgent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.options import OpsOptions
from trpc_bridge.telemetry.span_buffer import SpanBuffer

from .browser import Playground, playground_browser, read_run

#: One headless Chromium at a time: the browser tests share a pytest-xdist worker.
pytestmark = pytest.mark.xdist_group("browser")

#: Error text colour of the light theme (playground.css, --error).
ERROR_RED = "rgb(176, 0, 32)"


class RoutingAgent:
    """The demo agent, except for prompts naming a scenario (``state``, ``unicode``,
    ``long``); every request is kept."""

    name = "weather-agent"
    description = demo_agent().description
    skills: Sequence[Skill] = ()

    def __init__(self) -> None:
        self.requests: list[AgentRequest] = []
        self._demo = demo_agent()
        self._scenarios: dict[str, Agent] = {
            "state": ScenarioAgent("state_delta", SCRIPTS["state_delta"]),
            "unicode": ScenarioAgent("unicode", SCRIPTS["unicode"]),
            # Slow enough to be stopped midway from the page.
            "long": ScenarioAgent("long", SCRIPTS["long"], delay=0.02),
            "markdown": FunctionAgent("markdown", "", _markdown),
        }

    async def run(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        self.requests.append(request)
        agent = self._scenarios.get(request.text.split()[0], self._demo)
        async for event in agent.run(request):
            yield event


#: An answer in Markdown, with what a sanitiser must keep out of the page.
MARKDOWN = """## Result

It is **sunny** and *warm*, see [the forecast](https://example.com/f?a=1&b=2).

- one
- two with `code`

```python
print("<b>not bold</b>")
```

<img src=x onerror="document.title='pwned'"> [click](javascript:document.title='pwned')"""


async def _markdown(request: AgentRequest) -> AsyncIterator[AgentEvent]:
    for piece in MARKDOWN.split(" "):
        yield AgentEvent.text_delta(piece + " ", "chatcmpl-md")
    yield AgentEvent.final_text(MARKDOWN, "chatcmpl-md")


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
async def served(
    exporter: InMemorySpanExporter,
) -> AsyncIterator[tuple[BridgeServer, RoutingAgent]]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    buffer = SpanBuffer()  # the trace view's spans
    provider.add_span_processor(buffer)
    agent = RoutingAgent()
    options = ServerOptions(
        grpc_port=None, tracer_provider=provider, ops=OpsOptions(span_buffer=buffer)
    )
    async with BridgeServer(agent, options) as server:
        yield server, agent


async def test_demo_agent_run_is_shown_live(
    served: tuple[BridgeServer, RoutingAgent], exporter: InMemorySpanExporter
) -> None:
    server, agent = served
    async with playground_browser() as playground:
        await playground.open(server.playground_url)
        assert await playground.page.locator(".agent-name").inner_text() == "weather-agent"

        run = await playground.ask("What is the weather in Paris?", user="alice")
        shown = await read_run(run)
        assert shown.status == "finished"
        assert shown.reasoning == [
            "The user asks about the weather in Paris; I should call get_weather."
        ]
        assert shown.tools == [("get_weather", {"city": "Paris"}, {"city": "Paris", "temp": 14})]
        assert shown.answers == ["It is 14°C in Paris."]
        assert shown.errors == []
        # The trace id is the one the bridge recorded for this AG-UI run.
        [span] = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
        assert span.context is not None
        assert shown.trace_id == f"{span.context.trace_id:032x}"
        assert span.attributes is not None and span.attributes["a2a.transport"] == "AG-UI"

        # Reasoning folds and unfolds from the keyboard.
        summary = run.locator(".reasoning summary")
        details = run.locator(".reasoning details")
        await summary.focus()
        await playground.page.keyboard.press("Enter")
        assert await details.evaluate("d => d.open") is False
        await playground.page.keyboard.press("Enter")
        assert await details.evaluate("d => d.open") is True

        code = await read_run(await playground.ask("run some code"))
        assert code.status == "finished"
        # The code is shown once: in the Code box, not again in the answer that said it.
        assert code.code == ["print(6 * 7)"]
        assert code.output == ["42\n"]
        assert code.answers == ["Let me compute it.", "The result is 42."]
        await playground.screenshot("playground-demo.png")  # docs/playground.png

        await check_more_turns(playground, agent)
        await playground.screenshot("playground-demo-all.png")
        assert playground.errors == []


async def check_more_turns(playground: Playground, agent: RoutingAgent) -> None:
    """State, markup-like text, an error and a stop, all in the thread of the first two."""
    state = await read_run(await playground.ask("state please"))
    assert state.tools == [("set_counter", {"value": 1}, {"ok": True})]
    assert state.state_ops == ["add /counter = 1"]
    assert state.answers == ["Counter set."]
    await playground.page.locator("#state-panel summary").click()  # the thread's state
    assert '"counter": 1' in await playground.page.locator("#state").inner_text()

    # Agent text is text: nothing it says becomes markup.
    unicode = await read_run(await playground.ask("unicode"))
    assert unicode.answers == ["a<b>&c 😀 你好"]
    assert await playground.page.locator("#transcript b").count() == 0

    failed = await playground.ask("please fail")
    shown = await read_run(failed)
    assert shown.status == "error"
    assert shown.errors == ["Error: the demo agent was asked to fail (DEMO_FAILURE)"]
    error = failed.locator(".step.error")
    assert await error.get_attribute("role") == "alert"
    assert await error.evaluate("e => getComputedStyle(e).color") == ERROR_RED

    # Stop (Escape) cancels a run midway: the server hears the disconnect.
    page = playground.page
    await page.locator("#prompt").fill("long story")
    await page.locator("#prompt").press("Enter")
    running = playground.run(5)
    await running.locator(".answer-text").wait_for()
    await page.keyboard.press("Escape")
    await running.and_(page.locator("[data-status=stopped]")).wait_for()
    assert len((await read_run(running)).answers[0].split()) < 1000

    # One thread: every run went to the same context, as the user the field named.
    thread = await playground.thread_id()
    assert [r.context_id for r in agent.requests] == [thread] * 6
    assert {r.user_id for r in agent.requests} == {"alice"}
    # The history the page sends ends with the new prompt; the bridge runs that one.
    assert [r.text for r in agent.requests][:2] == [
        "What is the weather in Paris?",
        "run some code",
    ]

    # Keyboard: from the prompt, Tab reaches Send.
    await page.locator("#prompt").focus()
    await page.keyboard.press("Tab")
    assert await page.evaluate("document.activeElement.id") == "send"


async def test_new_thread_and_narrow_window(
    served: tuple[BridgeServer, RoutingAgent], exporter: InMemorySpanExporter
) -> None:
    server, agent = served
    async with playground_browser(width=360, height=740) as playground:
        await playground.open(server.playground_url)
        first = await playground.thread_id()
        await playground.ask("weather in London")
        await playground.new_thread()
        second = await playground.thread_id()
        assert second != first
        assert await playground.page.locator("#transcript .run").count() == 0
        shown = await read_run(await playground.ask("weather in Shenzhen"))
        assert shown.answers == ["It is 28°C in Shenzhen."]
        assert [(r.text, r.context_id) for r in agent.requests] == [
            ("weather in London", first),
            ("weather in Shenzhen", second),
        ]
        assert {r.user_id for r in agent.requests} == {"anonymous"}  # empty field: no header
        # Readable in a phone-sized window: nothing wider than the screen.
        width = await playground.page.evaluate("document.documentElement.scrollWidth")
        assert width <= 360
        await playground.screenshot("playground-narrow.png")
        assert playground.errors == []


async def test_markdown_is_rendered_safely_and_each_run_shows_its_trace(
    served: tuple[BridgeServer, RoutingAgent], exporter: InMemorySpanExporter
) -> None:
    server, _ = served
    async with playground_browser() as playground:
        await playground.open(server.playground_url)
        page = playground.page
        run = await playground.ask("markdown please")
        answer = run.locator(".answer-text")
        assert await answer.locator("h4").inner_text() == "Result"
        assert await answer.locator("strong").inner_text() == "sunny"
        assert await answer.locator("em").inner_text() == "warm"
        assert await answer.locator("li").all_inner_texts() == ["one", "two with code"]
        assert await answer.locator("pre code").inner_text() == 'print("<b>not bold</b>")'
        link = answer.locator("a")
        assert await link.count() == 1  # the javascript: link stays text
        assert await link.get_attribute("href") == "https://example.com/f?a=1&b=2"
        assert await link.get_attribute("rel") == "noopener noreferrer nofollow"
        # Markup in the answer is text: no element from it, nothing it ran.
        assert await page.locator("#transcript img, #transcript b, #transcript script").count() == 0
        assert "<img src=x" in await answer.inner_text()
        assert await page.title() == "trpc-bridge playground"

        # The waterfall of the weather run: its SERVER span and the tool's span, nested.
        weather = await playground.ask("weather in Paris")
        rows = weather.locator(".trace-view .span-row")
        await weather.locator(".span-row[data-kind=SERVER]").wait_for()
        await weather.locator(".span-row", has_text="execute_tool get_weather").wait_for()
        names = await rows.locator(".span-name").all_inner_texts()
        assert names[0] == "invoke_agent weather-agent"
        assert "execute_tool get_weather" in names
        trace_id = await weather.get_attribute("data-trace-id")
        recorded = {
            f"{s.context.span_id:016x}"
            for s in exporter.get_finished_spans()
            if s.context is not None and f"{s.context.trace_id:032x}" == trace_id
        }
        shown = {await row.get_attribute("data-span-id") for row in await rows.all()}
        assert shown == recorded
        tool = weather.locator(".span-row", has_text="execute_tool get_weather")
        assert "gen_ai.tool.name=get_weather" in await tool.locator(".span-attributes").inner_text()
        await playground.screenshot("playground-trace.png")
        assert playground.errors == []
