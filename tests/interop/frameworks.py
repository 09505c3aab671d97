"""The Python agent frameworks as interop peers: trpc-agent-python (a2a-sdk 0.3 and 1.x
extras) and Google ADK, each in its own virtualenv under ``build/peers/`` (built by
``make peers``, part of ``make test``), running the programs of ``interop/python/``.

One server process per framework serves every scenario (each on its own port), and one
client process per framework answers every call: importing a framework takes seconds.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from peers import ROOT, stop

PEER_DIR = ROOT / "interop" / "python"
VENVS = ROOT / "build" / "peers"


@dataclass(frozen=True)
class Framework:
    """One framework install: its virtualenv, its peer program and what it can do."""

    key: str  # column label: trpc-py, trpc-py-v1, adk
    venv: str
    program: str
    package: str  # the distribution whose version the report shows
    v1: bool = False
    #: The framework's A2A client has a non-streaming mode.
    unary_client: bool = False
    #: A2A wire its server and client use (v0 = 0.3 JSON-RPC, v1 = 1.0 JSON-RPC).
    wire: str = "v0"

    @property
    def python(self) -> Path:
        return VENVS / self.venv / "bin" / "python"

    def args(self, command: str) -> list[str]:
        args = [str(self.python), str(PEER_DIR / self.program), command]
        return [*args, "--v1"] if self.v1 else args

    def version(self) -> str:
        """``package X (a2a-sdk Y)`` as installed in the virtualenv."""
        code = "import importlib.metadata as m, sys; print(*map(m.version, sys.argv[1:]))"
        result = subprocess.run(
            [str(self.python), "-c", code, self.package, "a2a-sdk"],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        package, sdk = result.stdout.split()
        return f"{self.package} {package} (a2a-sdk {sdk})"


TRPC_PY = Framework("trpc-py", "trpc-py", "trpc_peer.py", "trpc-agent-py")
TRPC_PY_V1 = Framework(
    "trpc-py-v1", "trpc-py-v1", "trpc_peer.py", "trpc-agent-py", v1=True, wire="v1"
)
ADK = Framework("adk", "adk", "adk_peer.py", "google-adk", unary_client=True, wire="v1")
FRAMEWORKS = (TRPC_PY, TRPC_PY_V1, ADK)

#: The scenarios the framework peers express (interop/python/scripts.py).
SCENARIOS = ("text", "reasoning", "tool", "parallel_tools", "error", "unicode", "long")


FRAMEWORK_LEGEND = """\
Python frameworks table: `trpc-py` = trpc-agent-python with its `a2a` extra (a2a-sdk 0.3, \
A2A 0.3 JSON-RPC), `trpc-py-v1` = the same with its `a2a-v1` extra (a2a-sdk 1.x, trpc's own \
A2A 1.0 implementation: its cells stand in for the Go v1 cells that cannot be built here, \
see interop/go/README.md), `adk` = Google ADK (`to_a2a` server, `RemoteA2aAgent` client). \
`X→py` = framework X's client calling `trpc-bridge serve`; `py→X` = the bridge's \
`RemoteAgent` calling X's server; `X→proxy→Y` = X's client calling `trpc-bridge proxy` in \
front of Y's server; every bridge runs with its default options (its default card is \
read by every client here, a2a-sdk 0.3 and 1.x alike). A cell passes \
when the client shows the scenario's content, no text twice, one id per response (and a \
trpc-agent-py caller's session keeps the answer); trpc-agent-go's client is held to what \
it shows against trpc-agent-go's own server. `xfail` = fails today, tracked by a strict \
xfail (tests/interop/known_failures.py)."""


def versions() -> str:
    """One line per framework peer, as installed under build/peers."""
    lines = []
    for framework in FRAMEWORKS:
        found = framework.version() if missing(framework) is None else "not installed"
        lines.append(f"- `{framework.key}`: {found}")
    return "\n".join(lines)


def missing(framework: Framework) -> str | None:
    if framework.python.exists():
        return None
    return f"{framework.python} missing: run `make peers`"


@dataclass
class PeerServers:
    """A framework's server process; ``urls[scenario]`` is that scenario's A2A URL."""

    proc: subprocess.Popen[str]
    urls: dict[str, str] = field(default_factory=dict)


def _read_ready(proc: subprocess.Popen[str], timeout: float) -> dict[str, str]:
    found: queue.Queue[tuple[str, str] | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            words = line.split()
            if len(words) >= 2 and words[0] == "READY":
                found.put((words[1], words[2] if len(words) > 2 else ""))
        found.put(None)

    threading.Thread(target=read, daemon=True).start()
    urls: dict[str, str] = {}
    while True:
        try:
            item = found.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError(f"peer servers not ready in {timeout}s") from None
        if item is None:
            raise RuntimeError(f"peer server exited early with {proc.wait()}")
        if item[0] == "all":
            return urls
        urls[item[0]] = item[1]


@contextlib.contextmanager
def peer_servers(framework: Framework, timeout: float = 300.0) -> Iterator[PeerServers]:
    proc = subprocess.Popen(
        framework.args("serve"),
        stdin=subprocess.PIPE,  # closed when this process ends: the server stops then
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=PEER_DIR,
    )
    try:
        yield PeerServers(proc, _read_ready(proc, timeout))
    finally:
        stop(proc)


class PeerClient:
    """A framework's client process: :meth:`call` runs one call and returns its answer
    (``{"events": [...], "session": [...]}``, see interop/python/harness.py)."""

    def __init__(self, framework: Framework) -> None:
        self.framework = framework
        self._proc = subprocess.Popen(
            framework.args("client"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=PEER_DIR,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._lock = threading.Lock()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if line.startswith("{"):  # frameworks log to stdout too
                self._lines.put(line)
        self._lines.put(None)

    def call(self, url: str, *, stream: bool = True, timeout: float = 300.0) -> dict[str, Any]:
        request = {"url": url, "message": "hi", "user": "interop-user", "stream": stream}
        request["session"] = "interop-session"
        with self._lock:
            assert self._proc.stdin is not None
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            try:
                line = self._lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(
                    f"{self.framework.key} client: no answer in {timeout}s"
                ) from None
        if line is None:
            raise AssertionError(f"{self.framework.key} client exited with {self._proc.wait()}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise AssertionError(f"{self.framework.key} client failed: {answer['error']}")
        return answer

    def close(self) -> None:
        if self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        stop(self._proc)
