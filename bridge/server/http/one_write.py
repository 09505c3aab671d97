"""A response's writes within one turn of the event loop sent as one write.

An exchange (``server/http/exchange.py``) writes a response's head (status line and
headers) as soon as the app starts the response, then each piece of its body as the app
sends it, and for a chunked body a last ``0\\r\\n\\r\\n``: on a connection without Nagle
(uvicorn's server sets ``TCP_NODELAY``) each write would be a TCP segment and, on
loopback, a wake-up of the reader in the writer's own time (about a fifth of a short
proxied stream's time went to its five writes, ``bench/README.md``). :class:`TurnWrites`
is the transport a request's response is written to: it holds what is written until the
end of the current turn of the event loop and sends it at once. A small JSON answer leaves
as one segment (head and body); a stream writes once per batch of frames, its head with
its first frames and its last frames with the end of the body. Nothing waits longer than
the turn it was written in; the bytes are the exchange's, in its order.

A flush waits one more turn when the task that wrote has been woken again before it ran:
what that task awaited is done, so it runs next and may write more. A proxied stream's
writer is woken so while the producer decodes the upstream's last batch (the flush of
the batch before was queued behind that work): its last frames then leave in the same
write as the frames before, one write fewer where the caller waits for the end (1–2 % of a
proxied tool request, ``bench/README.md``). It waits once, never longer.

A response that ends its connection (``Connection: close``) ends with the transport's
``close``, which the event loop carries out after the callbacks already queued: the
request's generators unwinding, the run finishing, the store's write, 50-60 µs on a
proxied stream, while the client waits for the end of the connection to know the
response is whole. :meth:`TurnWrites.end` sends the TCP FIN with the last bytes instead
(a half-close of a plain socket whose bytes all went out; TLS, whose end is a record of
its own, closes as before).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any


class TurnWrites:
    """``transport`` for one request's response (see the module doc); any other use of
    the transport goes to it unchanged."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        #: What was written in this turn (None: nothing held).
        self._held: list[bytes] | None = None
        #: The task that wrote it (None: a callback did).
        self._writer: asyncio.Task[Any] | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is None:
            self._held = [data]
            self._writer = asyncio.current_task()
            self._loop.call_soon(self._flush)
        else:
            held.append(data)

    def _flush(self) -> None:
        if self._held is not None and self._writer_woken():
            self._loop.call_soon(self._send)  # once: after the writer's next step
        else:
            self._send()

    def _writer_woken(self) -> bool:
        """The task that wrote is scheduled to run: the future it awaits is done (see the
        module doc). Read from ``Task._fut_waiter``, which CPython's tasks have always
        had; a task without it is never waited for."""
        waiter = getattr(self._writer, "_fut_waiter", None)
        return waiter is not None and waiter.done()

    def _send(self) -> None:
        held, self._held, self._writer = self._held, None, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def flush(self) -> None:
        """Send what is held now (a response that is complete: nothing more of it can
        come in this turn, and what the turn does next need not go first)."""
        self._send()

    def close(self) -> None:
        self._send()
        self._transport.close()

    def end(self, *, plain: bool) -> None:
        """Close after a complete response; ``plain``: not TLS, so the FIN may leave now
        (see the module doc)."""
        self._send()
        transport = self._transport
        if plain and not transport.is_closing() and not transport.get_write_buffer_size():
            raw = transport.get_extra_info("socket")
            if raw is not None:
                # A socket object around the transport's own descriptor, detached again so
                # that the descriptor stays the transport's to close.
                sock = socket.socket(raw.family, raw.type, raw.proto, raw.fileno())
                with contextlib.suppress(OSError):  # the peer may be gone already
                    sock.shutdown(socket.SHUT_WR)
                sock.detach()
        transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
