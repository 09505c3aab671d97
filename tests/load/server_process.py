"""A ``trpc-bridge serve`` in its own process, for tests that load it, read its memory or
kill it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx

CLI = Path(sys.executable).parent / "trpc-bridge"
HERE = Path(__file__).parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@dataclass
class ServerProcess:
    process: subprocess.Popen[bytes]
    url: str

    def rss_kib(self) -> int:
        """Resident memory of the server process (Linux ``/proc``)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        line = next(x for x in status.splitlines() if x.startswith("VmRSS:"))
        return int(line.split()[1])

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final frames — a crash."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)


@contextlib.asynccontextmanager
async def served(agent: str, *flags: str) -> AsyncIterator[ServerProcess]:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    process = subprocess.Popen(
        [
            str(CLI),
            "serve",
            "--agent",
            agent,
            "--port",
            str(port),
            "--grpc-port",
            "0",
            "--no-trace-view",
            *flags,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    server = ServerProcess(process, f"http://127.0.0.1:{port}")
    try:
        async with httpx.AsyncClient(timeout=2) as http:
            for _ in range(600):
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(f"{server.url}/.well-known/agent-card.json")).is_success:
                        break
                assert process.poll() is None, "the server process exited"
                await asyncio.sleep(0.05)
        yield server
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=30)
