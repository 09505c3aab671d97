"""``trpc-bridge acp``: the ACP door on stdin/stdout, as editors start agents.

stdout carries ACP's newline-delimited JSON-RPC and nothing else; diagnostics go to
stderr. The ``agent-client-protocol`` package provides the framing and the concurrent
dispatch (``session/cancel`` arrives while ``session/prompt`` runs); what the calls mean
is :class:`~trpc_bridge.server.doors.acp.door.AcpDoor`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import Any

from acp.connection import Connection
from acp.stdio import stdio_streams

from trpc_bridge.agent import Agent
from trpc_bridge.server.doors.acp.door import AcpDoor
from trpc_bridge.server.doors.acp.wire_log import E2AWireLog
from trpc_bridge.server.runner import AgentRunner

#: Largest ACP message read (a prompt with images or embedded files can be large).
MAX_MESSAGE_BYTES = 50 * 1024 * 1024


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

        async def notify(method: str, params: Any) -> None:
            await connection.send_notification(method, params)

        door = AcpDoor(AgentRunner(agent), notify, user_id=user_id, wire_log=log)
        connection = Connection(door.handle, writer, reader, listening=False)
        try:
            await connection.main_loop()
        finally:
            await asyncio.shield(connection.close())


async def serve_acp_upstream(url: str, **options: Any) -> None:
    """:func:`serve_acp` for a remote A2A agent (e.g. trpc-agent-go). Raises
    ``RemoteAgentError`` when its card cannot be used."""
    from trpc_bridge.client import RemoteAgent  # only this path needs the A2A client

    async with await RemoteAgent.connect(url) as remote:
        await serve_acp(remote, **options)
