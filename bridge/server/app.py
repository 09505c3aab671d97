"""``BridgeServer``: a Python :class:`~trpc_bridge.agent.Agent` served over A2A the way
trpc-agent-go serves its agents — JSON-RPC 0.3 and 1.0 on one URL, REST, gRPC — with the
agent card at both well-known paths.

Library use::

    async with BridgeServer(agent) as server:        # free loopback ports
        print(server.jsonrpc_url, server.grpc_address)
        ...                                          # call it with any A2A client

    app = BridgeServer(agent).starlette_app()        # ASGI app, e.g. for httpx.ASGITransport

    await BridgeServer(agent, ServerOptions(port=8080, grpc_port=50051)).serve()

``ServerOptions`` holds the ports (``0`` = pick a free one, ``None`` for gRPC = no gRPC),
the negotiation policy, the trpc encoding options, the task store URL (empty = in
memory; ``sqlite:///path.db`` or ``postgresql+asyncpg://…`` = a2a-sdk's
``DatabaseTaskStore``), the request size limit and an optional base path.
"""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import Callable
from types import TracebackType

# a2a-sdk 1.3 has an import cycle: when its 0.3 gRPC *server* handler is imported before
# its client, the client factory loses the 0.3 gRPC transport and silently speaks 1.0 to
# 0.3 gRPC servers (in this process: a proxy, the tests). Importing the client first avoids it.
import a2a.client  # noqa: F401
import grpc
from a2a.server.routes import create_rest_routes
from a2a.types import AgentCard
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from trpc_bridge import redaction
from trpc_bridge.agent import Agent
from trpc_bridge.names import (
    CARD_PATHS,
    TRANSPORT_AGUI,
    TRANSPORT_JSONRPC,
)
from trpc_bridge.server.a2a.call_context import rest_contexts
from trpc_bridge.server.a2a.card import CardForms, build_agent_card, card_forms
from trpc_bridge.server.a2a.card_routes import card_routes
from trpc_bridge.server.a2a.card_signing import CARD_KEY_KEPT, SignedCards, sign_card
from trpc_bridge.server.a2a.handler import BridgeRequestHandler
from trpc_bridge.server.a2a.jsonrpc03 import Jsonrpc03Methods
from trpc_bridge.server.a2a.jsonrpc_route import jsonrpc_routes
from trpc_bridge.server.a2a.rest_screen import RestScreen
from trpc_bridge.server.auth.card_security import declare_security
from trpc_bridge.server.auth.http_edge import HttpAuthentication
from trpc_bridge.server.doors.agui import agui_routes
from trpc_bridge.server.doors.playground import playground_paths, playground_routes
from trpc_bridge.server.drain import drain
from trpc_bridge.server.grpc_port import grpc_server
from trpc_bridge.server.http.limits import RequestLimits
from trpc_bridge.server.http.listener import HttpListener, check_port_free
from trpc_bridge.server.http.media_types import MediaTypes
from trpc_bridge.server.ops.operations import Operations
from trpc_bridge.server.options import ServerOptions
from trpc_bridge.server.push.delivery import PushDelivery
from trpc_bridge.server.push.signing import CLOCK_LEEWAY, TOKEN_LIFETIME, PushSigner
from trpc_bridge.server.push.store import WideIdPushConfigStore, make_push_config_store
from trpc_bridge.server.refusals import RefusalLog, install_refusal_logging
from trpc_bridge.server.replicas.replication import Replication
from trpc_bridge.server.replicas.tables import JournalTables
from trpc_bridge.server.runner import AgentRunner
from trpc_bridge.server.signing.jwks_route import JWKS_PATH, KeySource, jwks_routes
from trpc_bridge.server.signing.key_ring import KeyRing
from trpc_bridge.server.tasks.store import WideIdTaskStore, check_task_store, make_task_store


class BridgeServer:
    """Serves ``agent`` over JSON-RPC (0.3 + 1.0), REST and gRPC. See the module doc."""

    def __init__(self, agent: Agent, options: ServerOptions | None = None) -> None:
        self.agent = agent
        self.options = options or ServerOptions()
        install_refusal_logging()
        self.ops = Operations(self.options.ops, agent_name=agent.name)
        redaction.install(self.options.redaction)
        security = self.options.security
        security.check(self.options.host)  # SecurityConfigError: one line naming the flags
        self.gate = security.gate()
        self.tls = security.tls
        durability = self.options.durability
        self.task_store = make_task_store(
            durability.task_store,
            keep_tasks=durability.keep_tasks,
            keep_task_mb=durability.keep_task_mb,
        )
        self.runner = AgentRunner(
            agent,
            self.task_store,
            tracer_provider=self.options.tracer_provider,
            run_timeout=self.options.limits.run_timeout,
            gate=self.gate,
            metrics=self.ops.metrics,
        )
        #: Journal, fan-out and monitor: with a database task store only.
        self.replication: Replication | None = None
        if isinstance(self.task_store, WideIdTaskStore):
            self.task_store.metrics = self.ops.metrics
            self.replication = Replication(
                JournalTables(self.task_store),
                self.options.durability,
                self.runner.tasks,
                metrics=self.ops.metrics,
                on_command=self._on_command,
            )
        card_key = self.options.card_signing_key
        #: Signs the card, re-read when the file changes (raises ``SigningKeyError`` for
        #: a file that cannot be used at start).
        self.card_keys: KeyRing | None = None
        if card_key:
            self.card_keys = KeyRing(name="card", path=card_key, keep_for=CARD_KEY_KEPT)
        self.push_keys: KeyRing | None = None
        self.push: PushDelivery | None = None
        if self.options.push.enabled:
            self.push_keys = KeyRing(
                name="push",
                path=self.options.push.signing_key,
                rotate_every=self.options.push.key_rotation,
                keep_for=TOKEN_LIFETIME + CLOCK_LEEWAY,
            )
            configs = make_push_config_store(self.task_store)
            self.push = PushDelivery(
                configs,
                self.options.push.policy,
                signer=PushSigner(self.push_keys, lambda: self.base_url),
            )
            self.push.metrics = self.ops.metrics
            self.runner.tasks.observer = self.push
        self.handler = BridgeRequestHandler(
            self.runner,
            self.options.encoding,
            push=self.push,
        )
        self.ops.watch(
            self.runner.tasks,
            self.task_store,
            None if self.replication is None else self.replication.fanout,
        )
        self.base_path = self.options.base_path.rstrip("/")
        self.http_port = self.options.port
        self.grpc_port = self.options.grpc_port
        self._http: HttpListener | None = None
        self._grpc: grpc.aio.Server | None = None
        self._grpc_stopping: asyncio.Task[None] | None = None

    async def _on_command(self, verb: str, task_id: str) -> None:
        if verb == "push" and self.push is not None:
            self.push.watch(task_id)
        await self.runner.tasks.on_command(verb, task_id)

    # --- addresses ------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        if self.options.public_url and self._http is None:
            return self.options.public_url.rstrip("/")
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{self.options.host}:{self.http_port}{self.base_path}"

    @property
    def jsonrpc_url(self) -> str:
        return f"{self.base_url}/"

    @property
    def rest_url(self) -> str:
        return self.base_url

    @property
    def card_url(self) -> str:
        return f"{self.base_url}{CARD_PATHS[0]}"

    @property
    def grpc_address(self) -> str:
        return f"{self.options.host}:{self.grpc_port}" if self._grpc is not None else ""

    @property
    def jwks_url(self) -> str:
        return f"{self.base_url}{JWKS_PATH}"

    @property
    def agui_url(self) -> str:
        return f"{self.base_url}/agui"

    @property
    def playground_url(self) -> str:
        return f"{self.base_url}/" if self.options.playground else ""

    def describe(self) -> list[str]:
        """What this server serves, one line per endpoint (printed by the CLI)."""
        lines = [f"agent     {self.agent.name}"]
        if self.playground_url:
            lines.append(f"web page  {self.playground_url}  (the playground: open it in a browser)")
        lines += [
            f"JSON-RPC  {self.jsonrpc_url}  (A2A 0.3 and 1.0)",
            f"REST      {self.rest_url}  (A2A 1.0)",
        ]
        if self.grpc_address:
            lines.append(f"gRPC      {self.grpc_address}  (A2A 0.3 and 1.0, AgentHost)")
        lines += [f"AG-UI     {self.agui_url}", f"card      {self.card_url}"]
        root = f"http://{self.options.host}:{self.http_port}"
        lines.append(f"probes    {root}/healthz  {root}/readyz")
        ops = self.options.ops
        if ops.prometheus is not None and ops.metrics_path:
            lines.append(f"metrics   {root}/metrics")
        if self.ops.metrics_port is not None:
            lines.append(f"metrics   http://{self.options.host}:{self.ops.metrics_port}/metrics")
        return lines

    def _card(self) -> AgentCard:
        card = build_agent_card(
            self.agent,
            base_url=self.base_url,
            grpc_address=self.grpc_address,
            push=self.push is not None,
        )
        declare_security(card, self.options.security)
        return card

    def agent_card(self) -> AgentCard:
        """The card with every interface, signed with the card key of the moment."""
        return self._signed(self._card())  # signed last: the signature covers the schemes

    def _signed(self, card: AgentCard) -> AgentCard:
        if self.card_keys is None:
            return card
        return sign_card(card, self.card_keys.current(), jku=self.jwks_url)

    def _card_source(self) -> Callable[[], CardForms]:
        """Every form of the card as served now: signed (schemes included) with the card
        key of the moment, signed again only when that key changes."""
        forms = card_forms(self._card())
        if self.card_keys is None:
            return lambda: forms
        return SignedCards(forms, self.card_keys, jku=self.jwks_url)

    def _key_sources(self) -> list[KeySource]:
        return [keys.published for keys in (self.push_keys, self.card_keys) if keys is not None]

    # --- ASGI -----------------------------------------------------------------------

    def _jsonrpc_paths(self) -> list[str]:
        return [self.base_path, f"{self.base_path}/"] if self.base_path else ["/"]

    def starlette_app(self) -> Starlette:
        """The HTTP side: card routes, JSON-RPC (0.3 + 1.0) routes, REST routes (last,
        because the SDK's REST routes end with a catch-all mount)."""
        cards = self._card_source()
        self.handler.cards = cards
        routes: list[BaseRoute] = card_routes(
            cards, base_path=self.base_path, strict_card=self.options.strict_card
        )
        sources = self._key_sources()
        if sources:
            routes.extend(jwks_routes(sources, base_path=self.base_path))
        # 0.3 message/stream and message/send: jsonrpc03 writes the SDK's bytes without
        # its per-frame conversions.
        own = Jsonrpc03Methods(self.handler)
        routes.extend(jsonrpc_routes(self.handler, self._jsonrpc_paths(), own=own))
        # AG-UI for the same agent; before REST, whose routes end with a catch-all mount.
        agui_path = f"{self.base_path}/agui"
        routes.extend(agui_routes(self.runner, path=agui_path))
        if self.options.playground:
            routes.extend(playground_routes(self.base_path))
        routes.extend(self.ops.routes(self.base_path, playground=self.options.playground))
        # REST is A2A 1.0 only: a2a-sdk's 0.3 REST adapter turns a client's mistake into a
        # dropped connection and a traceback, and no card ever advertised it.
        routes.extend(
            create_rest_routes(
                self.handler,
                context_builder=rest_contexts(),
                enable_v0_3_compat=False,
                path_prefix=self.base_path,
            )
        )
        jsonrpc = self._jsonrpc_paths()
        public = [
            *(self.base_path + p for p in (*CARD_PATHS, JWKS_PATH)),  # keys are public
            *self.ops.public_paths(),
        ]
        if self.options.playground:
            public += playground_paths(self.base_path)
        transports = {path: TRANSPORT_JSONRPC for path in jsonrpc} | {agui_path: TRANSPORT_AGUI}
        unchecked = self.ops.unchecked_paths(self.base_path)
        middleware = [
            *self.ops.middleware(transports),
            Middleware(RefusalLog, jsonrpc_paths=jsonrpc),
            # Before anything reads the body: every door's caller is verified here.
            Middleware(
                HttpAuthentication,
                gate=self.gate,
                jsonrpc_paths=jsonrpc,
                plain_paths=[agui_path, *unchecked],
                public_paths=public,
                loopback_paths=self.ops.loopback_paths(self.base_path),
            ),
            Middleware(
                RequestLimits,
                max_bytes=self.options.limits.max_request_bytes,
                jsonrpc_paths=jsonrpc,
                body_timeout=self.options.limits.body_timeout,
            ),
            Middleware(MediaTypes, jsonrpc_paths=jsonrpc, unchecked_paths=[agui_path, *unchecked]),
            Middleware(
                RestScreen,
                base_path=self.base_path,
                other_paths=[
                    *jsonrpc,
                    agui_path,
                    *(self.base_path + p for p in (*CARD_PATHS, JWKS_PATH)),
                    *unchecked,
                ],
            ),
        ]
        return Starlette(routes=routes, middleware=middleware)

    # --- serving --------------------------------------------------------------------

    async def start(self) -> None:
        """Check the task store, bind the ports, then serve HTTP (uvicorn) and gRPC in
        this event loop. A store that cannot be used raises ``TaskStoreError`` and a port
        that cannot be bound ``OSError``, with nothing left running."""
        host = self.options.host
        try:
            await check_task_store(self.task_store, self.options.durability.task_store)
            # The span buffer joins the process's tracer provider for good: only once the
            # server can serve (a failed start must not turn tracing on for the process).
            self.ops.install_span_buffer()
            await self.gate.start()
            self._http = HttpListener(host, self.options.port, signals=False)  # binds now
            self.http_port = self._http.port
            await self._start_durable()
            if self.grpc_port is not None:
                check_port_free(host, self.grpc_port, "gRPC")
                self._grpc = grpc_server(
                    self.handler, self.runner, self.gate, self.ops, self.options.limits
                )
                address = f"{host}:{self.grpc_port}"
                try:
                    if self.tls is not None:
                        credentials = self.tls.grpc_credentials()
                        self.grpc_port = self._grpc.add_secure_port(address, credentials)
                    else:
                        self.grpc_port = self._grpc.add_insecure_port(address)
                except RuntimeError as exc:
                    raise OSError(f"cannot listen on {address} (gRPC)") from exc
                await self._grpc.start()
            await self._http.start(
                self.starlette_app(),
                header_timeout=self.options.limits.header_timeout,
                keep_alive=self.options.limits.keep_alive,
                max_connections=self.options.limits.max_connections,
                max_header_bytes=self.options.limits.max_header_bytes,
                max_header_lines=self.options.limits.max_header_lines,
                tls=None if self.tls is None else self.tls.server_context(),
                trusted_proxies=self.options.security.trusted_proxies,
            )
            await self.ops.start(host)
        except BaseException:
            await self.stop()
            raise

    async def _start_durable(self) -> None:
        if self.replication is None:
            return
        await self.replication.tables.create()
        if self.push is not None and isinstance(self.push.store, WideIdPushConfigStore):
            await self.push.store.initialize()
        await self.replication.start(f"{socket.gethostname()}:{self.http_port}")

    async def stop(self) -> None:
        # Each part stops even when another failed: a gRPC server left running would
        # shut down from its finaliser after the loop is gone ("Event loop is closed").
        try:
            if self._http is not None:
                await self._http.stop()
        finally:
            try:
                if self._grpc_stopping is not None:
                    await self._grpc_stopping
                elif self._grpc is not None:
                    await self._grpc.stop(grace=1)
            finally:
                await self._stop_services()

    async def _stop_services(self) -> None:
        await self.ops.stop()
        await self.runner.tasks.unsaved.stop()
        await self.gate.close()
        if self.push is not None:
            await self.push.close()
        if self.replication is not None:
            await self.replication.stop()
        engine = getattr(self.task_store, "engine", None)
        if engine is not None:
            await engine.dispose()

    async def serve(self, echo: Callable[[str], object] | None = None) -> None:
        """Start, tell ``echo`` what is served (:meth:`describe`), run until SIGTERM or
        Ctrl-C, shut down gracefully (:meth:`shut_down`), stop."""
        await self.start()
        assert self._http is not None
        requested, forced = asyncio.Event(), asyncio.Event()

        def on_signal() -> None:  # the second signal: no more grace
            (forced if requested.is_set() else requested).set()

        loop = asyncio.get_running_loop()
        signals = (signal.SIGINT, signal.SIGTERM)
        for sig in signals:
            loop.add_signal_handler(sig, on_signal)
        try:
            if echo is not None:
                for line in self.describe():
                    echo(line)
            serving = asyncio.ensure_future(self._http.wait())
            asked = asyncio.ensure_future(requested.wait())
            await asyncio.wait({serving, asked}, return_when=asyncio.FIRST_COMPLETED)
            asked.cancel()
            if requested.is_set():
                await self.shut_down(forced)
        finally:
            for sig in signals:
                loop.remove_signal_handler(sig)
            await self.stop()

    async def shut_down(self, forced: asyncio.Event | None = None) -> None:
        """Fail readiness (and wait ``unready_delay`` seconds), stop accepting
        (connections, RPCs, new runs), give running tasks ``shutdown_grace`` seconds, then
        end each with a final frame (see drain)."""
        grace = self.options.durability.shutdown_grace
        forced = forced or asyncio.Event()
        await self.ops.drain(forced)
        if self._http is not None:
            self._http.stop_accepting()
        if self._grpc is not None:  # new RPCs refused now; running ones end below
            self._grpc_stopping = asyncio.ensure_future(self._grpc.stop(grace + 6))
        await drain(self.runner.tasks, grace, forced)

    async def __aenter__(self) -> BridgeServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
