"""Health and readiness, for a load balancer or an orchestrator's probes.

- ``GET /healthz``: the process answers (HTTP 200) — nothing else is checked, so a slow
  database never gets a live process restarted.
- ``GET /readyz``: HTTP 200 when the server takes new work: the task store answers (a
  database store: ``SELECT 1``), the replica fan-out answers (when there is one), and the
  server is not draining; HTTP 503 otherwise. The body says which check failed.

On SIGTERM the server fails readiness *first* (:meth:`Readiness.drain`), waits
``--unready-delay`` seconds while still serving, then stops accepting and drains
(``docs/deploy.md``). The same answers reach gRPC callers through the standard health
service (:mod:`~trpc_bridge.server.ops.grpc_ops`). Both probes are served at the root of
the HTTP port (and of the metrics port, which keeps answering during the drain).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from trpc_bridge.server.tasks.store import first_line

#: One dependency's check: returns when it answers, raises when it does not.
Check = Callable[[], Awaitable[None]]

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
#: Seconds a report is reused: probes from several balancers share one round of checks.
_REUSE = 0.5


@dataclass(frozen=True)
class Report:
    ready: bool
    #: Check name → ``ok`` or why it failed (one line, no secrets: the store URL is not
    #: in it, only the error's first line).
    checks: dict[str, str] = field(default_factory=dict)


class Readiness:
    """Whether the server takes new work (see the module doc)."""

    def __init__(self, checks: dict[str, Check], *, timeout: float) -> None:
        self.checks = checks
        self.timeout = timeout
        self.draining = False
        self._last: tuple[float, Report] | None = None
        self._running: asyncio.Future[Report] | None = None
        #: Told when readiness turns off for good (the gRPC health service).
        self.on_drain: list[Callable[[], Awaitable[None]]] = []

    async def drain(self) -> None:
        """Not ready any more, whatever the checks say (SIGTERM)."""
        self.draining = True
        for listener in self.on_drain:
            await listener()

    async def report(self) -> Report:
        if self.draining:
            return Report(False, {"server": "draining"})
        now = time.monotonic()
        if self._last is not None and now - self._last[0] < _REUSE:
            return self._last[1]
        if self._running is None:  # one round of checks at a time
            self._running = asyncio.ensure_future(self._check())
        running = self._running
        try:
            report = await asyncio.shield(running)
        finally:
            if running.done() and self._running is running:
                self._running = None
        self._last = (time.monotonic(), report)
        return Report(False, {"server": "draining"}) if self.draining else report

    async def _check(self) -> Report:
        names = list(self.checks)
        results = await asyncio.gather(
            *(self._one(self.checks[name]) for name in names), return_exceptions=False
        )
        checks = dict(zip(names, results, strict=True))
        return Report(all(result == "ok" for result in results), checks)

    async def _one(self, check: Check) -> str:
        try:
            await asyncio.wait_for(check(), self.timeout)
        except TimeoutError:
            return f"no answer within {self.timeout:g} s"
        except Exception as exc:  # the dependency's failure is the report, never raised
            return first_line(exc) or type(exc).__name__
        return "ok"


def probe_routes(readiness: Readiness) -> list[BaseRoute]:
    """``/healthz`` and ``/readyz`` (GET and HEAD)."""

    async def healthz(_: Request) -> Response:
        return JSONResponse({"status": "ok"}, headers={"Cache-Control": "no-store"})

    async def readyz(_: Request) -> Response:
        report = await readiness.report()
        body = {"status": "ready" if report.ready else "not ready", "checks": report.checks}
        return JSONResponse(
            body, status_code=200 if report.ready else 503, headers={"Cache-Control": "no-store"}
        )

    return [
        Route(HEALTH_PATH, healthz, methods=["GET"]),
        Route(READY_PATH, readyz, methods=["GET"]),
    ]
