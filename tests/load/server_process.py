"""A ``trpc-bridge serve`` in its own process, for tests that load it, read its memory or
kill it."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from peers import running

CLI = Path(sys.executable).parent / "trpc-bridge"
HERE = Path(__file__).parent


@dataclass
class ServerProcess:
    process: subprocess.Popen[str]
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
    """``trpc-bridge serve`` on free loopback ports, ready to answer when entered."""
    command = [str(CLI), "serve", "--agent", agent, "--port", "0", "--grpc-port", "0"]
    command += ["--no-trace-view", *flags]
    pythonpath = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    with running(command, {"PYTHONPATH": pythonpath}) as process:
        yield ServerProcess(process.proc, process.url.rstrip("/"))
