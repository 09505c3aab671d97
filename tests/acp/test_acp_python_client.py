"""``trpc-bridge acp`` driven by a real ACP client: the ``agent-client-protocol``
package's client side, which starts the door as a subprocess on stdio as an editor does.

Local agents here (the demo agent, the interop scenario twins, the agents of
``acp_test_agents.py``); the door against trpc-agent-go is in ``tests/interop``.
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, image_block, resource_link_block, text_block
from acp_client import acp_door, kinds, text_of

from trpc_bridge.codecs.e2a import E2AResponse, check_stream


async def test_demo_agent_streams_thoughts_tools_code_and_text() -> None:
    async with acp_door("--agent", "demo") as door:
        session = await door.new_session()
        answer = await door.conn.prompt(
            session_id=session, prompt=[text_block("weather in Paris?")]
        )
        assert answer.stop_reason == "end_turn"
        updates = door.client.take()
        assert {u["sessionId"] for u in updates} == {session}
        assert kinds(updates)[-1] == "agent_message_chunk"
        call = next(u for u in updates if u["sessionUpdate"] == "tool_call")
        assert (call["toolCallId"], call["title"], call["status"]) == (
            "call_001",
            "get_weather",
            "in_progress",
        )
        assert call["rawInput"] == {"city": "Paris"}
        done = next(u for u in updates if u["sessionUpdate"] == "tool_call_update")
        assert (done["toolCallId"], done["status"]) == ("call_001", "completed")
        assert done["rawOutput"] == {"city": "Paris", "temp": 14}
        order = kinds(updates)
        assert (
            order.index("agent_thought_chunk")
            < order.index("tool_call")
            < order.index("tool_call_update")
        )
        assert "get_weather" in text_of(updates, "agent_thought_chunk")
        assert text_of(updates) == "It is 14°C in Paris."
        thought_ids = {
            u["messageId"] for u in updates if u["sessionUpdate"] == "agent_thought_chunk"
        }
        text_ids = {u["messageId"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"}
        assert len(thought_ids) == len(text_ids) == 1 and thought_ids != text_ids

        answer = await door.conn.prompt(session_id=session, prompt=[text_block("run some code")])
        updates = door.client.take()
        run = next(u for u in updates if u["sessionUpdate"] == "tool_call")
        assert run["kind"] == "execute" and "print(6 * 7)" in run["rawInput"]["code"]
        output = next(u for u in updates if u["sessionUpdate"] == "tool_call_update")
        assert output["toolCallId"] == run["toolCallId"] and output["rawOutput"] == {
            "output": "42\n"
        }
        assert text_of(updates).endswith("The result is 42.")

        with pytest.raises(RequestError) as failed:
            await door.conn.prompt(session_id=session, prompt=[text_block("please fail")])
        assert "the demo agent was asked to fail" in str(failed.value)
        assert text_of(door.client.take()) == "Working on it"

        # The same session goes on after a failed turn.
        answer = await door.conn.prompt(
            session_id=session, prompt=[text_block("weather in London")]
        )
        assert (
            answer.stop_reason == "end_turn"
            and text_of(door.client.take()) == "It is 11°C in London."
        )


async def _raw(door: Any, method: str, params: Any) -> RequestError:
    with pytest.raises(RequestError) as raised:
        await door.conn._conn.send_request(method, params)
    return raised.value


async def test_bad_requests_get_precise_errors_and_the_door_keeps_serving() -> None:
    async with acp_door("--agent", "demo") as door:
        session = await door.new_session()
        unknown = await _raw(
            door, "session/prompt", {"sessionId": "nope", "prompt": [{"type": "text", "text": "x"}]}
        )
        assert unknown.code == -32602 and "unknown sessionId" in json.dumps(unknown.data)
        bad_block = await _raw(
            door, "session/prompt", {"sessionId": session, "prompt": [{"type": "image"}]}
        )
        assert bad_block.code == -32602 and "prompt.0.image.data" in json.dumps(bad_block.data)
        not_base64 = await _raw(
            door,
            "session/prompt",
            {
                "sessionId": session,
                "prompt": [{"type": "image", "mimeType": "image/png", "data": "@@"}],
            },
        )
        assert not_base64.code == -32602 and "not base64" in json.dumps(not_base64.data)
        no_cwd = await _raw(door, "session/new", {"mcpServers": []})
        assert no_cwd.code == -32602
        assert (await _raw(door, "session/load", {"sessionId": session, "cwd": "/"})).code == -32601
        assert (await _raw(door, "session/prompt", [1, 2])).code == -32602
        answer = await door.conn.prompt(session_id=session, prompt=[text_block("weather in Paris")])
        assert answer.stop_reason == "end_turn"


async def test_cancel_stops_the_run_and_answers_cancelled() -> None:
    async with acp_door("--agent", "trpc_bridge.agents.scenarios:long_slow") as door:
        session = await door.new_session()
        prompt = asyncio.create_task(
            door.conn.prompt(session_id=session, prompt=[text_block("hi")])
        )
        await door.first_text_chunk()
        busy = await _raw(
            door,
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": "x"}]},
        )
        assert busy.code == -32600  # one prompt at a time per session
        await door.conn.cancel(session_id=session)
        answer = await asyncio.wait_for(prompt, timeout=30)
        assert answer.stop_reason == "cancelled"
        assert 0 < len(door.client.take()) < 1000
        for _ in range(200):  # the agent's iterator was closed: it logged its end
            if any(line.get("log") == "run_end" for line in door.logs()):
                break
            await asyncio.sleep(0.02)
        end = next(line for line in door.logs() if line.get("log") == "run_end")
        assert end["canceled"] is True


async def test_identity_sessions_and_multimodal_prompts_reach_the_agent() -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    async with acp_door("--agent", "acp_test_agents:echo", "--user", "alice") as door:
        first, second = await door.new_session(), await door.new_session()
        blocks: list[Any] = [
            text_block("look "),
            image_block(png, "image/png"),
            resource_link_block("a.txt", "file:///tmp/a.txt"),
            text_block("here"),
        ]
        await door.conn.prompt(session_id=first, prompt=blocks)
        echoed = text_of(door.client.take())
        assert (
            echoed
            == f"text=look here|user=alice|context={first}|parts=image:image/png:8,file:-:file:///tmp/a.txt"
        )
        await door.conn.prompt(session_id=second, prompt=[text_block("again")])
        assert f"context={second}|" in text_of(door.client.take())


async def test_agent_exception_names_only_its_type_and_the_wire_log_replays(tmp_path: Path) -> None:
    wire = tmp_path / "wire.jsonl"
    async with acp_door("--agent", "acp_test_agents:explode", "--wire-log", str(wire)) as door:
        session = await door.new_session()
        with pytest.raises(RequestError) as failed:
            await door.conn.prompt(session_id=session, prompt=[text_block("go")])
        assert "agent failed: RuntimeError" in str(failed.value)
        assert "hunter2" not in json.dumps(
            [str(failed.value), failed.value.data, door.client.updates]
        )
    records = [E2AResponse.from_dict(json.loads(line)) for line in wire.read_text().splitlines()]
    check_stream(records)
    assert [r.response_kind for r in records] == ["e2a.chunk", "e2a.error"]
    assert records[-1].status == "failed" and records[-1].session_id == session
    assert "hunter2" not in wire.read_text()


async def test_trace_context_in_meta_parents_the_agent_span() -> None:
    trace_id, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    async with acp_door("--agent", "demo", env={"OTEL_TRACES_EXPORTER": "console"}) as door:
        session = await door.new_session()
        await door.conn.prompt(
            session_id=session,
            prompt=[text_block("weather in Paris")],
            traceparent=f"00-{trace_id}-{parent}-01",
        )
        for _ in range(200):  # spans are exported when they end
            if any(s.get("name", "").startswith("invoke_agent") for s in door.logs()):
                break
            await asyncio.sleep(0.02)
    spans = {s["name"]: s for s in door.logs() if "context" in s}
    agent_span = spans["invoke_agent weather-agent"]
    assert agent_span["context"]["trace_id"] == f"0x{trace_id}"
    assert agent_span["parent_id"] == f"0x{parent}" and agent_span["kind"] == "SpanKind.SERVER"
    tool_span = spans["execute_tool get_weather"]
    assert tool_span["parent_id"] == agent_span["context"]["span_id"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--agent", "demo", "--upstream", "http://127.0.0.1:9/"), "exactly one"),
        (("--agent", "no_such_module:agent"), "cannot import"),
        (("--upstream", "http://127.0.0.1:9/"), "cannot reach"),
    ],
)
async def test_bad_command_lines_exit_with_one_line(args: tuple[str, ...], message: str) -> None:
    from acp_client import AGENTS_DIR, TRPC_BRIDGE

    proc = await asyncio.create_subprocess_exec(
        str(TRPC_BRIDGE),
        "acp",
        *args,
        cwd=AGENTS_DIR,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode in (1, 2) and out == b""
    assert message in err.decode() and "Traceback" not in err.decode()
