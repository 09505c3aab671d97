"""Processes for the interop matrix: the Go peer (``interop/go``) and the bridge CLI.

Every process listens on a loopback port chosen here and is killed when its context exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parallel import exclusive

ROOT = Path(__file__).resolve().parents[2]
GO_DIR = ROOT / "interop" / "go"
GOPEER = GO_DIR / "bin" / "gopeer"
AGENTHOST_DIR = ROOT / "interop" / "agenthost"
AGENTHOST = AGENTHOST_DIR / "bin" / "agenthost"
TRPC_BRIDGE = Path(sys.executable).parent / "trpc-bridge"
SKIP_NO_GO = "Go toolchain not on PATH: the interop matrix needs `go` to build interop/go"


def go_available() -> bool:
    return shutil.which("go") is not None


def go_env() -> dict[str, str]:
    env = dict(os.environ)
    if not env.get("HOME"):  # Go derives its caches from HOME; keep them in the tree instead
        env.setdefault("GOCACHE", str(ROOT / "build" / "go-cache"))
        env.setdefault("GOPATH", str(ROOT / "build" / "go-path"))
    return env


def go(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``go ARGS`` in a module of interop/ (its output captured)."""
    return subprocess.run(
        ["go", *args],
        cwd=directory,
        env=go_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def go_build(directory: Path, binary: Path) -> Path:
    """Build a Go program of interop/; a build failure is a test failure, not a skip."""
    result = go(directory, "build", "-o", str(binary), ".")
    if result.returncode != 0:
        where = directory.relative_to(ROOT)
        raise RuntimeError(f"go build of {where} failed:\n{result.stderr[-4000:]}")
    return binary


def build_gopeer() -> Path:
    with exclusive("gopeer"):  # every worker builds it once; one at a time
        return go_build(GO_DIR, GOPEER)


def build_agenthost() -> Path:
    with exclusive("agenthost"):
        return go_build(AGENTHOST_DIR, AGENTHOST)


@dataclass
class Process:
    """A running peer whose stderr JSON log lines are collected as they arrive."""

    proc: subprocess.Popen[str]
    url: str
    logs: list[dict[str, Any]] = field(default_factory=list)
    #: Every stdout line so far (trpc-bridge's endpoint list, …).
    stdout: list[str] = field(default_factory=list)

    def grpc_address(self, timeout: float = 10.0) -> str:
        """``host:port`` of the ``gRPC`` line trpc-bridge prints with its endpoints."""
        return self.endpoint("gRPC", timeout)

    def endpoint(self, label: str, timeout: float = 10.0) -> str:
        """The address on the line trpc-bridge prints for ``label`` (``gRPC``,
        ``metrics``, …) with its endpoints."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.stdout):
                if line.startswith(label):
                    return line.split()[1]
            time.sleep(0.02)
        raise AssertionError(f"no {label} line in {timeout}s; saw {self.stdout}")

    def wait_for_log(self, predicate: Any, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.logs):
                if predicate(line):
                    return line
            time.sleep(0.02)
        raise AssertionError(f"no matching log line in {timeout}s; saw {self.logs[-10:]}")


def _collect_stderr(process: Process) -> None:
    assert process.proc.stderr is not None
    for raw in process.proc.stderr:
        with contextlib.suppress(json.JSONDecodeError):
            line = json.loads(raw)
            if isinstance(line, dict):
                process.logs.append(line)


#: What a peer prints once it listens: gopeer's ``READY <url>``, trpc-bridge's endpoint
#: list, agenthost's ``READY grpc://host:port``.
_LISTENING = re.compile(r"^(?:READY|JSON-RPC)\s+((?:http|grpc)://\S+?)/?(?:\s|$)")


def _read_url(proc: subprocess.Popen[str], lines: list[str], timeout: float = 120.0) -> str:
    """The base URL the peer reports on stdout; every line is kept in ``lines``."""
    found: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.strip())
            match = _LISTENING.match(line.strip())
            if match:
                found.put(match.group(1) + "/")
        found.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        url = found.get(timeout=timeout)
    except queue.Empty:
        raise RuntimeError(f"peer did not report its address in {timeout}s") from None
    if url is None:
        raise RuntimeError(f"peer exited early with {proc.wait()}")
    return url


@contextlib.contextmanager
def running(
    cmd: list[str], env: Mapping[str, str] | None = None, *, cwd: Path | None = None
) -> Iterator[Process]:
    """Run ``cmd`` (a server that binds port 0 and reports its URL on stdout: no port
    races), with ``env`` added to this process's environment; stop it on exit. The
    start-up bound is generous: a loaded CI machine takes tens of seconds to import a
    Python server (liveness, not speed)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd
    )
    try:
        stdout: list[str] = []
        process = Process(proc=proc, url=_read_url(proc, stdout), stdout=stdout)
        threading.Thread(target=_collect_stderr, args=(process,), daemon=True).start()
        yield process
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[str]) -> None:
    """Terminate a peer, killing it if it does not exit within 5 s."""
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()


@contextlib.contextmanager
def go_server(
    scenario: str,
    *,
    chunk_delay: str = "0s",
    extra: list[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Iterator[Process]:
    cmd = [str(GOPEER), "serve", "--scenario", scenario, "--addr", "127.0.0.1:0"]
    cmd += ["--structured-errors", "--chunk-delay", chunk_delay, *(extra or [])]
    with running(cmd, env) as process:
        yield process


@contextlib.contextmanager
def bridge_server(
    agent: str, *, extra: list[str] | None = None, env: Mapping[str, str] | None = None
) -> Iterator[Process]:
    """``trpc-bridge serve`` in its own process, as a user would run it; without the
    playground's span buffer (on by default on loopback, it would trace every call), unless
    ``extra`` asks for it (``--trace-view``)."""
    cmd = [str(TRPC_BRIDGE), "serve", "--agent", agent, "--host", "127.0.0.1"]
    cmd += ["--port", "0", "--grpc-port", "0", "--no-trace-view", *(extra or [])]
    with running(cmd, env) as process:
        yield process


@contextlib.contextmanager
def bridge_proxy(
    upstream: str, *, grpc: bool = True, env: Mapping[str, str] | None = None
) -> Iterator[Process]:
    """``trpc-bridge proxy --upstream`` in its own process (tracing as ``env`` sets it;
    no span buffer, as for :func:`bridge_server`)."""
    cmd = [str(TRPC_BRIDGE), "proxy", "--upstream", upstream, "--port", "0"]
    cmd += ["--grpc-port", "0" if grpc else "-1", "--no-trace-view"]
    with running(cmd, env) as process:
        yield process


@contextlib.contextmanager
def agenthost_server(*flags: str) -> Iterator[Process]:
    """The Go ``AgentHost`` sidecar (``interop/agenthost``); its url is ``grpc://…/``."""
    with running([str(AGENTHOST), "serve", "--addr", "127.0.0.1:0", *flags]) as process:
        yield process


@dataclass
class CallResult:
    events: list[dict[str, Any]]
    logs: list[dict[str, Any]]
    returncode: int


def go_call(
    url: str,
    message: str,
    *,
    stream: bool,
    user: str = "interop-user",
    cancel_after: int = 0,
    timeout: float = 120.0,
    extra: list[str] | None = None,
) -> CallResult:
    cmd = [str(GOPEER), "call", "--url", url, "--message", message, "--user", user]
    cmd += extra or []
    cmd.append("--stream" if stream else "--no-stream")
    if cancel_after:
        cmd += ["--cancel-after", str(cancel_after)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    logs = []
    for line in result.stderr.splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            parsed = json.loads(line)
            if isinstance(parsed, dict):
                logs.append(parsed)
    return CallResult(events=events, logs=logs, returncode=result.returncode)


_UUID = r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}"
_GENERATED = re.compile(rf"(?:msg-|task-|ctx-|runner-completion-|artifact-)?{_UUID}")


def normalise(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Replace generated ids by placeholders numbered in order of first appearance, so two
    runs compare equal exactly when they share structure (same id reused in the same
    places), whatever random values each side drew."""
    seen: dict[str, str] = {}

    def placeholder(match: re.Match[str]) -> str:
        return seen.setdefault(match.group(0), f"<id{len(seen)}>")

    text = json.dumps(events, ensure_ascii=False, sort_keys=True)
    return list(json.loads(_GENERATED.sub(placeholder, text)))
