"""The serving commands' event loop: uvloop when installed, asyncio's on request, and a
one-line error for a ``TRPC_BRIDGE_LOOP`` that names no usable loop."""

from __future__ import annotations

import asyncio
import sys

import pytest
import uvloop
from typer.testing import CliRunner

from trpc_bridge.cli import app
from trpc_bridge.cli.event_loop import LOOP_ENV, LoopError, loop_factory, run


def test_auto_and_uvloop_choose_uvloop() -> None:
    assert loop_factory("auto") is uvloop.new_event_loop
    assert loop_factory("uvloop") is uvloop.new_event_loop
    assert loop_factory(" UVLOOP ") is uvloop.new_event_loop


def test_asyncio_is_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    assert loop_factory("asyncio") is None
    monkeypatch.setenv(LOOP_ENV, "asyncio")
    assert loop_factory() is None


def test_without_uvloop_auto_falls_back_and_uvloop_is_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop now fails
    assert loop_factory("auto") is None
    with pytest.raises(LoopError, match="uvloop is not installed"):
        loop_factory("uvloop")


def test_run_uses_the_chosen_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[type[asyncio.AbstractEventLoop]] = []

    async def main() -> None:
        seen.append(type(asyncio.get_running_loop()))

    run(main())
    monkeypatch.setenv(LOOP_ENV, "asyncio")
    run(main())
    assert seen[0] is uvloop.Loop
    assert not issubclass(seen[1], uvloop.Loop)


def test_unknown_loop_is_one_line_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOOP_ENV, "trio")
    result = CliRunner().invoke(app, ["serve", "--port", "0", "--grpc-port", "-1"])
    assert result.exit_code == 2
    assert "TRPC_BRIDGE_LOOP='trio': use auto, uvloop or asyncio" in result.output
    assert "Traceback" not in result.output
