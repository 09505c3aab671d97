"""The agent frameworks and A2A SDKs as interop peers, all built by ``make peers`` (part
of ``make test``):

- Python: trpc-agent-python (a2a-sdk 0.3 and 1.x extras) and Google ADK, each in its own
  virtualenv under ``build/peers/``, running the programs of ``interop/python/``;
- JavaScript: the A2A JavaScript SDK (``interop/js``) and Google ADK for TypeScript
  (``interop/adk-js``), each with its own ``node_modules``;
- Java: the A2A Java SDK (``interop/java``), compiled to ``build/peers/java``.

Every peer speaks the protocol of ``interop/python/harness.py`` and replays the scripts
of ``interop/python/scripts.py`` (the other languages get them as JSON in
``PEER_SCRIPTS``). One server process per peer serves every scenario (each on its own
port), and one client process per peer answers every call: starting one takes seconds.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from peers import ROOT, stop

PEER_DIR = ROOT / "interop" / "python"
VENVS = ROOT / "build" / "peers"
#: The Java peer's build: ``classes/`` and the SDK's ``classpath.txt`` (Makefile).
JAVA_BUILD = VENVS / "java"


def peer_scripts() -> ModuleType:
    """``interop/python/scripts.py`` (framework-free), imported from its file."""
    spec = importlib.util.spec_from_file_location("peer_scripts", PEER_DIR / "scripts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@functools.cache
def _scripts_json() -> str:
    text: str = peer_scripts().as_json()
    return text


@dataclass(frozen=True)
class Framework:
    """One peer install: how it runs, its peer program and what it can do."""

    key: str  # column label: trpc-py, trpc-py-v1, adk, js, java, adk-js
    venv: str
    program: str
    package: str  # the distribution whose version the report shows
    v1: bool = False
    #: The framework's A2A client has a non-streaming mode.
    unary_client: bool = False
    #: A2A wire its server and client use (v0 = 0.3 JSON-RPC, v1 = 1.0 JSON-RPC).
    wire: str = "v0"
    #: How the peer runs: ``python`` (``venv`` under build/peers), ``node`` or ``java``.
    runtime: str = "python"
    #: Its folder under interop/ (``program`` is there).
    folder: str = "python"
    #: An SDK, not a framework: its client prints A2A frames (``views.a2a_view`` folds
    #: them), and it declares no trpc ``interaction_spec_version``, so the bridge answers
    #: it plain A2A: the answer text only (docs/specs/trpc-interaction.md §3.1).
    sdk: bool = False

    @property
    def directory(self) -> Path:
        return ROOT / "interop" / self.folder

    @property
    def python(self) -> Path:
        return VENVS / self.venv / "bin" / "python"

    def args(self, command: str) -> list[str]:
        if self.runtime == "node":
            return ["node", str(self.directory / self.program), command]
        if self.runtime == "java":
            classpath = f"{JAVA_BUILD / 'classes'}{os.pathsep}{_java_classpath()}"
            return ["java", "-cp", classpath, self.program, command]
        args = [str(self.python), str(PEER_DIR / self.program), command]
        return [*args, "--v1"] if self.v1 else args

    def env(self) -> dict[str, str]:
        return {**os.environ, "PEER_SCRIPTS": _scripts_json()}

    def version(self) -> str:
        """``package X (a2a-sdk Y)`` as installed (the SDK's version for SDK peers)."""
        if self.runtime == "node":
            found = _node_version(self.directory, self.package)
            sdk = _node_version(self.directory, "@a2a-js/sdk")
            return f"{self.package} {found}" + ("" if self.sdk else f" (@a2a-js/sdk {sdk})")
        if self.runtime == "java":
            match = re.search(rf"{re.escape(self.package)}-([^/]+?)\.jar", _java_classpath())
            return f"{self.package} {match.group(1) if match else '?'}"
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
JS = Framework(
    "js",
    "",
    "peer.mjs",
    "@a2a-js/sdk",
    unary_client=True,
    wire="v1",
    runtime="node",
    folder="js",
    sdk=True,
)
JAVA = Framework(
    "java",
    "",
    "Peer",
    "a2a-java-sdk-client",
    unary_client=True,
    runtime="java",
    folder="java",
    sdk=True,
)
ADK_JS = Framework(
    "adk-js",
    "",
    "peer.mjs",
    "@google/adk",
    runtime="node",
    folder="adk-js",
)
FRAMEWORKS = (TRPC_PY, TRPC_PY_V1, ADK, JS, JAVA, ADK_JS)
#: The peers from outside Python and Go: the proxy pairs they join.
NEW_PEERS = ("js", "java", "adk-js")

#: The scenarios the framework peers express (interop/python/scripts.py).
SCENARIOS = ("text", "reasoning", "tool", "parallel_tools", "error", "unicode", "long")


FRAMEWORK_LEGEND = """\
Frameworks table: `trpc-py` = trpc-agent-python with its `a2a` extra (a2a-sdk 0.3, \
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
xfail (tests/interop/known_failures.py).

Peers of other languages, in the same table: `js` = the A2A JavaScript SDK \
(`@a2a-js/sdk`, A2A 1.0, interop/js), `java` = the A2A Java SDK (`a2a-java-sdk` 0.3, \
interop/java), `adk-js` = Google ADK for TypeScript (`toA2a` server, `RemoteA2AAgent` \
client, A2A 0.3, interop/adk-js). The two SDKs have no agent of their own: their servers \
stream each scripted step as artifact updates (pieces appended, then the complete \
response replacing them) with trpc's part conventions for reasoning and tool calls \
(docs/specs/trpc-interaction.md §0.4); their clients print the A2A frames they got, read \
by the model of what a user sees (docs/specs/trpc-interaction.md §11, \
tests/interop/views.py:a2a_view). They declare no trpc \
`interaction_spec_version`, so the bridge (and a proxy) answers them plain A2A: their \
`X→py` and `X→proxy→Y` cells expect the answer text (and the error) only, no reasoning \
or tools (§3.1). ADK for TypeScript's client mints an id per event: its events fold by \
the response id it carries, else by ADK's rule that partial events preview the next \
complete one. The Java SDK's and ADK for TypeScript's 0.3 clients read the 0.3 fields of \
the bridge's default card; the Java client runs on HTTP/1.1 (its default h2c offer loses \
the request body at the bridge: tests/interop/test_sdk_peers.py)."""


def versions() -> str:
    """One line per framework and SDK peer, as installed (make peers)."""
    lines = []
    for framework in FRAMEWORKS:
        found = framework.version() if missing(framework) is None else "not installed"
        lines.append(f"- `{framework.key}`: {found}")
    return "\n".join(lines)


def _node_version(directory: Path, package: str) -> str:
    manifest = directory / "node_modules" / package / "package.json"
    version: str = json.loads(manifest.read_text(encoding="utf-8"))["version"]
    return version


def _java_classpath() -> str:
    return (JAVA_BUILD / "classpath.txt").read_text(encoding="utf-8").strip()


def absent_toolchain(framework: Framework) -> str | None:
    """Why the peer's language cannot run here (its cells skip then), or None."""
    if framework.runtime == "python" or shutil.which(framework.runtime) is not None:
        return None
    return f"`{framework.runtime}` not on PATH: the {framework.key} peer needs it"


def missing(framework: Framework) -> str | None:
    """Why the peer's build is missing (a failure: `make peers` builds it), or None."""
    if framework.runtime == "python":
        if framework.python.exists():
            return None
        return f"{framework.python} missing: run `make peers`"
    if framework.runtime == "node":
        built = framework.directory / "node_modules"
    else:
        built = JAVA_BUILD / ".stamp"
    return None if built.exists() else f"{built} missing: run `make peers`"


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
        cwd=framework.directory,
        env=framework.env(),
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
            cwd=framework.directory,
            env=framework.env(),
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

    def call(
        self, url: str, *, stream: bool = True, timeout: float = 300.0, **options: Any
    ) -> dict[str, Any]:
        """One call; ``options`` go to the peer as they are (the Java peer's ``h2c``)."""
        request = {"url": url, "message": "hi", "user": "interop-user", "stream": stream}
        request.update(options)
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
