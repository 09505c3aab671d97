"""Health and readiness as a load balancer sees them: ``/healthz``, ``/readyz`` and the
standard gRPC health service (queried with grpcio's own health stub), against a real
PostgreSQL task store that is stopped and started again, and a real ``trpc-bridge serve``
process draining after SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Awaitable, Callable

import db_servers
import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from peers import bridge_server
from task_calls import TaskCalls, final_state

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.options import Durability

LONG = "trpc_bridge.agents.scenarios:long_slow"  # 1000 deltas, 5 ms apart
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def _health(address: str, service: str = "") -> int:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        response = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        status: int = response.status
        return status


async def _until(check: Callable[[], Awaitable[bool]], seconds: float = 60.0) -> None:
    """Until ``check()`` holds; a bound on liveness, not a timing check."""
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, "the condition never held"
        await asyncio.sleep(0.2)


async def test_healthz_readyz_and_grpc_health_of_a_memory_store_server() -> None:
    async with BridgeServer(demo_agent()) as server, httpx.AsyncClient(timeout=30) as http:
        root = f"http://127.0.0.1:{server.http_port}"
        health = await http.get(f"{root}/healthz")
        assert (health.status_code, health.json()) == (200, {"status": "ok"})
        ready = await http.get(f"{root}/readyz")
        assert (ready.status_code, ready.json()) == (200, {"status": "ready", "checks": {}})
        for service in (
            "",
            "lf.a2a.v1.A2AService",
            "a2a.v1.A2AService",
            "trpc_bridge.v1.AgentHost",
        ):
            assert await _health(server.grpc_address, service) == SERVING
        with pytest.raises(grpc.aio.AioRpcError) as unknown:
            await _health(server.grpc_address, "no.such.Service")
        assert unknown.value.code() == grpc.StatusCode.NOT_FOUND


async def test_readyz_follows_the_postgresql_store_down_and_up_again() -> None:
    if reason := db_servers.unavailable():
        pytest.skip(reason)
    with db_servers.postgres_cluster() as postgres:
        options = ServerOptions(durability=Durability(task_store=postgres.url))
        async with BridgeServer(demo_agent(), options) as server:
            root = f"http://127.0.0.1:{server.http_port}"
            async with httpx.AsyncClient(timeout=30) as http:

                async def ready() -> httpx.Response:
                    return await http.get(f"{root}/readyz")

                first = await ready()
                assert first.status_code == 200
                assert first.json()["checks"] == {"task_store": "ok", "fanout": "ok"}
                assert await _health(server.grpc_address) == SERVING

                postgres.stop()

                async def down() -> bool:
                    return (await ready()).status_code == 503

                await _until(down)
                report = (await ready()).json()
                assert report["status"] == "not ready"
                assert report["checks"]["task_store"] != "ok"
                assert "bridge@" not in str(report)  # no connection string in the answer
                assert (await http.get(f"{root}/healthz")).status_code == 200  # still alive
                assert await _health(server.grpc_address) == NOT_SERVING

                postgres.start()

                async def up() -> bool:
                    return (await ready()).status_code == 200

                await _until(up)
                assert (await ready()).json()["checks"] == {"task_store": "ok", "fanout": "ok"}
                assert await _health(server.grpc_address, "lf.a2a.v1.A2AService") == SERVING


async def test_sigterm_fails_readiness_before_the_drain_and_during_it() -> None:
    """Readiness fails at SIGTERM, while the HTTP port still accepts (the unready delay);
    then the port closes and the running stream drains to its end, the metrics port
    answering 503 all along; gRPC health says NOT_SERVING."""
    extra = ["--metrics-port", "0", "--unready-delay", "1.5", "--shutdown-grace", "60"]
    with bridge_server(LONG, extra=extra) as server:
        ops = server.endpoint("metrics").removesuffix("/metrics")
        grpc_address = server.grpc_address()
        calls = TaskCalls(server.url)
        async with httpx.AsyncClient(timeout=30) as http:
            assert (await http.get(f"{ops}/readyz")).status_code == 200
            assert await _health(grpc_address) == SERVING
            context = calls.stream("go")
            reader = await context.__aenter__()
            first = [await anext(reader) for _ in range(20)]
            server.proc.send_signal(signal.SIGTERM)

            async def unready() -> bool:
                return (await http.get(f"{ops}/readyz")).status_code == 503

            await _until(unready, 10)
            # Still accepting on the HTTP port: a balancer's probe reads the refusal there.
            refused = await http.get(f"{server.url}readyz")
            assert refused.status_code == 503
            assert refused.json() == {"status": "not ready", "checks": {"server": "draining"}}
            assert await _health(grpc_address) == NOT_SERVING

            async def closed() -> bool:
                async with httpx.AsyncClient(timeout=5) as fresh:
                    try:
                        await fresh.get(f"{server.url}healthz")
                    except httpx.ConnectError:
                        return True
                return False

            await _until(closed, 10)  # the drain: no new connections on the HTTP port
            assert (await http.get(f"{ops}/readyz")).status_code == 503  # ops port: still up
            rest = [frame async for frame in reader]  # the drain lets the run finish
            await context.__aexit__(None, None, None)
            assert final_state([*first, *rest]) == "completed"
        assert server.proc.wait(timeout=30) == 0
        await calls.close()
