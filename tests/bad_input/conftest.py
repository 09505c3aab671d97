"""One server per test module, and another caller's stream running through every case.

Each module of ``tests/bad_input/`` sends its bad requests to a bridge serving the
:class:`~running_stream.Ticker`, whose JSON-RPC stream is started before the first case
and must still be running after each; the module's last test stops it and checks it
completed with every delta in order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from trpc_bridge.server import BridgeServer, Limits, ServerOptions

from .running_stream import LIMIT, RunningStream, Ticker


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served() -> AsyncIterator[tuple[BridgeServer, RunningStream]]:
    ticker = Ticker()
    options = ServerOptions(limits=Limits(max_request_bytes=LIMIT))
    async with BridgeServer(ticker.agent(), options) as server:
        stream = RunningStream(server, ticker)
        await stream.start()
        yield server, stream
        ticker.stop()


@pytest.fixture
def server(served: tuple[BridgeServer, RunningStream]) -> BridgeServer:
    return served[0]


@pytest.fixture
def other_stream(served: tuple[BridgeServer, RunningStream]) -> RunningStream:
    return served[1]
