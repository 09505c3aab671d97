"""``trpc-bridge acp``: the ACP door on stdin/stdout, as editors start agents.

stdout carries ACP's newline-delimited JSON-RPC and nothing else; diagnostics go to
stderr. :mod:`~trpc_bridge.server.doors.acp.jsonrpc_lines` reads and writes the messages
(strictly: a line that is not one is answered, never dropped) and runs the calls
concurrently (``session/cancel`` arrives while ``session/prompt`` runs); what the calls
mean is :class:`~trpc_bridge.server.doors.acp.door.AcpDoor`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from acp.stdio import stdio_streams

from trpc_bridge.agent import Agent
from trpc_bridge.server.doors.acp.door import AcpDoor
from trpc_bridge.server.doors.acp.jsonrpc_lines import MAX_MESSAGE_BYTES, JsonRpcLines
from trpc_bridge.server.doors.acp.wire_log import E2AWireLog
from trpc_bridge.server.runner import AgentRunner


class StdioError(OSError):
    """stdin / stdout cannot carry ACP (a regular file instead of a pipe)."""


async def _stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    try:
        return await stdio_streams(limit=MAX_MESSAGE_BYTES)
    except ValueError as exc:  # asyncio's pipe transports take pipes, sockets and ttys only
        raise StdioError(
            "stdin and stdout must be pipes (an editor or `trpc-bridge acp … | cat`)"
        ) from exc


async def serve_acp(
    agent: Agent,
    *,
    user_id: str,
    wire_log: str | os.PathLike[str] | None = None,
    streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None,
) -> None:
    """Answer ACP on ``streams`` (default: stdin/stdout) until the client closes them."""
    reader, writer = streams or await _stdio()
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(E2AWireLog(wire_log)) if wire_log else None
        connection = JsonRpcLines(reader, writer)
        door = AcpDoor(AgentRunner(agent), connection.notify, user_id=user_id, wire_log=log)
        await connection.serve(door.handle)


async def serve_acp_upstream(url: str, **options: Any) -> None:
    """:func:`serve_acp` for a remote A2A agent (e.g. trpc-agent-go). Raises
    ``RemoteAgentError`` when its card cannot be used."""
    from trpc_bridge.client import RemoteAgent  # only this path needs the A2A client

    async with await RemoteAgent.connect(url) as remote:
        await serve_acp(remote, **options)
