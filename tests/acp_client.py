"""An ACP client (the ``agent-client-protocol`` package's client side) that starts
``trpc-bridge acp …`` as editors do and records what it is sent."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, RequestError, default_environment, spawn_agent_process
from acp.core import ClientSideConnection
from acp.schema import ClientCapabilities, Implementation

TRPC_BRIDGE = Path(sys.executable).parent / "trpc-bridge"
HERE = Path(__file__).parent
#: The door runs here, so ``--agent acp_test_agents:NAME`` finds the test agents.
AGENTS_DIR = HERE / "acp"
STARTUP_TIMEOUT = 300.0


@dataclass
class Recorder:
    """The client side: keeps every ``session/update`` as ACP JSON."""

    updates: list[dict[str, Any]] = field(default_factory=list)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(
            {
                "sessionId": session_id,
                **update.model_dump(mode="json", by_alias=True, exclude_none=True),
            }
        )

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("session/request_permission")

    def on_connect(self, conn: Any) -> None:
        pass

    def take(self) -> list[dict[str, Any]]:
        taken, self.updates = self.updates, []
        return taken


@dataclass
class Door:
    conn: ClientSideConnection
    client: Recorder
    stderr: list[str]

    def logs(self) -> list[dict[str, Any]]:
        out = []
        for line in self.stderr:
            with contextlib.suppress(ValueError):
                parsed = json.loads(line)
                if isinstance(parsed, dict):
                    out.append(parsed)
        return out

    async def first_text_chunk(self) -> None:
        """Wait until the running prompt has streamed some answer text (10 s at most)."""
        for _ in range(1000):
            if any(u["sessionUpdate"] == "agent_message_chunk" for u in self.client.updates):
                return
            await asyncio.sleep(0.01)
        raise AssertionError("no agent_message_chunk in 10 s")

    async def new_session(self) -> str:
        return (await self.conn.new_session(cwd=str(AGENTS_DIR), mcp_servers=[])).session_id


@contextlib.asynccontextmanager
async def acp_door(*args: str, env: dict[str, str] | None = None) -> AsyncIterator[Door]:
    """``trpc-bridge acp ARGS`` started, initialized, and stopped at the end; ``env`` is
    added to the trimmed environment an ACP client passes on."""
    client = Recorder()
    environment = {**default_environment(), **(env or {})}
    # Recorder implements the part of acp.Client that the door uses.
    as_client = cast(Client, client)
    spawned = spawn_agent_process(
        as_client, str(TRPC_BRIDGE), "acp", *args, cwd=AGENTS_DIR, env=environment
    )
    async with spawned as (conn, proc):
        stderr: list[str] = []

        async def drain() -> None:  # a full stderr pipe would block the door
            assert proc.stderr is not None
            async for line in proc.stderr:
                stderr.append(line.decode(errors="replace"))

        drainer = asyncio.create_task(drain())
        try:
            # A hang guard only: a first start on a busy machine compiles every module.
            initialized = conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(name="pytest", version="0"),
            )
            try:
                await asyncio.wait_for(initialized, timeout=STARTUP_TIMEOUT)
            except TimeoutError:
                raise AssertionError(f"no answer to initialize; stderr: {stderr[-20:]}") from None
            yield Door(conn, client, stderr)
        finally:
            drainer.cancel()


def kinds(updates: list[dict[str, Any]]) -> list[str]:
    return [u["sessionUpdate"] for u in updates]


def text_of(updates: list[dict[str, Any]], kind: str = "agent_message_chunk") -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == kind)


NODE_HARNESS = HERE / "acp_node"


async def node_client(args: list[str], turns: list[dict[str, Any]]) -> dict[str, Any]:
    """``trpc-bridge acp ARGS`` driven by the TypeScript ACP client (``tests/acp_node``)."""
    assert (NODE_HARNESS / "node_modules" / "@zed-industries").is_dir(), (
        "run `make tests/acp_node/node_modules` (npm ci) first"
    )
    spec = {"command": [str(TRPC_BRIDGE), "acp", *args], "cwd": str(AGENTS_DIR), "turns": turns}
    node = await asyncio.create_subprocess_exec(
        "node",
        str(NODE_HARNESS / "run.mjs"),
        json.dumps(spec),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(node.communicate(), timeout=180)
    assert node.returncode == 0, err.decode()[-2000:]
    summary: dict[str, Any] = json.loads(out)
    summary["stderr"] = err.decode(errors="replace")
    return summary


def node_updates(turn: dict[str, Any]) -> list[dict[str, Any]]:
    """A turn's updates in the shape :class:`Recorder` keeps."""
    return [{"sessionId": n["sessionId"], **n["update"]} for n in turn["updates"]]
