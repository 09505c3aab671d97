"""A deadline for every HTTP request head, which uvicorn does not have.

uvicorn closes a connection that stays idle after a response (``timeout_keep_alive``)
but waits for ever on one that sent half a request head: a few hundred such connections
(slowloris) hold sockets and memory for as long as their sender likes. The protocol here
gives each request head a deadline, counted from the connection's start or the end of
the previous response and not extended by bytes that trickle in: a head not complete by
then is answered ``408 Request Timeout`` and the connection closed. Request *bodies*
have their own deadline in :class:`~trpc_bridge.server.http.limits.RequestLimits`.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from trpc_bridge.server.auth.tls import tls_scope_extension
from trpc_bridge.server.refusals import log_refusal

_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
)


def head_deadline_protocol(header_timeout: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol (C parser and response writer: about 20 % less CPU per
    request than its h11 one) with a ``header_timeout`` (seconds) deadline per request
    head; pass it as ``uvicorn.Config(http=...)``. On a TLS connection each request's
    scope also carries the ASGI TLS extension (the client certificate: ``server/auth``),
    which uvicorn does not write."""

    class HeadDeadline(HttpToolsProtocol):
        _head_timer: asyncio.TimerHandle | None = None
        _tls: dict[object, object] | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._tls = tls_scope_extension(transport)
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._tls is not None:
                self.scope["extensions"] = {"tls": self._tls}

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            self._disarm()  # a whole head arrived: the request runs (or waits, pipelined)

        def on_response_complete(self) -> None:
            self._arm()  # first: a pipelined request started below disarms it again
            super().on_response_complete()

        def _arm(self) -> None:
            self._disarm()
            self._head_timer = self.loop.call_later(header_timeout, self._head_timed_out)

        def _disarm(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            busy = self.cycle is not None and not self.cycle.response_complete
            if busy or self.transport.is_closing():
                return
            host, port = self.client or ("?", 0)
            log_refusal(
                "HTTP connection",
                f"{host}:{port}",
                f"no complete request head within {header_timeout:g} s: 408, closed",
            )
            self.transport.write(_TIMEOUT_RESPONSE)
            self.transport.close()

    return HeadDeadline
