"""Processes for the interop matrix: the Go peer (``interop/go``) and the bridge CLI.

Every process listens on a loopback port chosen here and is killed when its context exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
GO_DIR = ROOT / "interop" / "go"
GOPEER = GO_DIR / "bin" / "gopeer"
TRPC_BRIDGE = Path(sys.executable).parent / "trpc-bridge"
SKIP_NO_GO = "Go toolchain not on PATH: the interop matrix needs `go` to build interop/go"


def go_available() -> bool:
    return shutil.which("go") is not None


def build_gopeer() -> Path:
    """Build the Go peer; a build failure is a test failure, not a skip."""
    env = dict(os.environ)
    if not env.get("HOME"):  # Go derives its caches from HOME; keep them in the tree instead
        env.setdefault("GOCACHE", str(ROOT / "build" / "go-cache"))
        env.setdefault("GOPATH", str(ROOT / "build" / "go-path"))
    result = subprocess.run(
        ["go", "build", "-o", str(GOPEER), "."],
        cwd=GO_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"go build of interop/go failed:\n{result.stderr[-4000:]}")
    return GOPEER


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Process:
    """A running peer whose stderr JSON log lines are collected as they arrive."""

    proc: subprocess.Popen[str]
    url: str
    logs: list[dict[str, Any]] = field(default_factory=list)

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


def _wait_ready(url: str, proc: subprocess.Popen[str], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"peer exited early with {proc.returncode}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}.well-known/agent-card.json", timeout=1.0).status_code == 200:
                return
        time.sleep(0.05)
    raise RuntimeError(f"peer at {url} not ready in {timeout}s")


@contextlib.contextmanager
def running(cmd: list[str], url: str) -> Iterator[Process]:
    """Run ``cmd`` (a server) until its card answers at ``url``; stop it on exit."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    process = Process(proc=proc, url=url)
    threading.Thread(target=_collect_stderr, args=(process,), daemon=True).start()
    try:
        _wait_ready(url, proc)
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
def go_server(scenario: str, *, chunk_delay: str = "0s") -> Iterator[Process]:
    port = free_port()
    cmd = [str(GOPEER), "serve", "--scenario", scenario, "--addr", f"127.0.0.1:{port}"]
    cmd += ["--structured-errors", "--chunk-delay", chunk_delay]
    with running(cmd, f"http://127.0.0.1:{port}/") as process:
        yield process


@contextlib.contextmanager
def bridge_server(agent: str, *, extra: list[str] | None = None) -> Iterator[Process]:
    """``trpc-bridge serve`` in its own process, as a user would run it."""
    port, grpc_port = free_port(), free_port()
    cmd = [str(TRPC_BRIDGE), "serve", "--agent", agent, "--host", "127.0.0.1"]
    cmd += ["--port", str(port), "--grpc-port", str(grpc_port), *(extra or [])]
    with running(cmd, f"http://127.0.0.1:{port}/") as process:
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
) -> CallResult:
    cmd = [str(GOPEER), "call", "--url", url, "--message", message, "--user", user]
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
