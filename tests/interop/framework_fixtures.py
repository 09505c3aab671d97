"""Session fixtures of the frameworks matrix: the framework peers' server and client
processes, the bridges (in-process, see bridge_thread.py) and the Go servers, each started
on first use and stopped at the end of the session."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bridge_thread import BridgeThread
from frameworks import (
    FRAMEWORKS,
    Framework,
    PeerClient,
    PeerServers,
    absent_toolchain,
    missing,
    peer_servers,
)
from peers import Process, go_server

from trpc_bridge.agents import scenarios
from trpc_bridge.server import ServerOptions


class Lazy(dict[Any, Any]):
    """Processes started on first use, stopped at the end of the session."""

    def __init__(self, stack: contextlib.ExitStack, start: Any) -> None:
        super().__init__()
        self._stack, self._start = stack, start

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self._start(self._stack, key)
        return value


def _runnable(key: str) -> Framework:
    """The peer ``key``; its cells skip without its language, fail without its build."""
    framework = next(f for f in FRAMEWORKS if f.key == key)
    if (reason := absent_toolchain(framework)) is not None:
        pytest.skip(reason)
    if (reason := missing(framework)) is not None:
        pytest.fail(reason)
    return framework


@pytest.fixture(scope="session")
def framework_servers() -> Iterator[dict[str, PeerServers]]:
    def start(stack: contextlib.ExitStack, key: str) -> PeerServers:
        return stack.enter_context(peer_servers(_runnable(key)))

    with contextlib.ExitStack() as stack:
        yield Lazy(stack, start)


@pytest.fixture(scope="session")
def framework_clients() -> Iterator[dict[str, PeerClient]]:
    def start(stack: contextlib.ExitStack, key: str) -> PeerClient:
        client = PeerClient(_runnable(key))
        stack.callback(client.close)
        return client

    with contextlib.ExitStack() as stack:
        yield Lazy(stack, start)


def peer_group(key: str) -> pytest.MarkDecorator:
    """The pytest-xdist group of the tests built around framework ``key``'s peer
    processes: they run in one worker, so that only that worker starts them (a framework
    takes seconds of CPU to import, in each worker that starts it)."""
    return pytest.mark.xdist_group(f"peers-{key}")


@pytest.fixture(scope="session")
def bridges() -> Iterator[dict[tuple[str, str], str]]:
    """``("serve", scenario)`` → ``trpc-bridge serve`` of the scenario's Python twin;
    ``("proxy", url)`` → ``trpc-bridge proxy --upstream url``: their base URLs, every one
    with the default options (the default card included: every client reads it)."""
    thread = BridgeThread()

    def start(_: contextlib.ExitStack, key: tuple[str, str]) -> str:
        kind, value = key
        options = ServerOptions()
        if kind == "serve":
            return thread.serve(getattr(scenarios, value), options)
        return thread.proxy(value, options)

    with contextlib.ExitStack() as stack:
        stack.callback(thread.close)
        yield Lazy(stack, start)


@pytest.fixture(scope="session")
def go_servers(gopeer: Path) -> Iterator[dict[str, Process]]:
    def start(stack: contextlib.ExitStack, scenario: str) -> Process:
        return stack.enter_context(go_server(scenario))

    with contextlib.ExitStack() as stack:
        yield Lazy(stack, start)
