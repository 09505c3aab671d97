"""A loopback OTLP/HTTP collector: every POST it receives (path, media type, body) is
kept for the test to decode with the OTLP protobuf messages; it answers ``status``."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class LoopbackCollector:
    def __init__(self) -> None:
        #: (path, content type, body) of each POST, in arrival order.
        self.bodies: list[tuple[str, str, bytes]] = []
        self.status = 200
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                collector.bodies.append((self.path, self.headers["Content-Type"], body))
                self.send_response(collector.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def received(self, path: str, timeout: float = 30.0) -> list[bytes]:
        """The bodies posted to ``path`` once there is one (liveness bound ``timeout``)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [body for where, _, body in list(self.bodies) if where == path]
            if found:
                return found
            time.sleep(0.05)
        return []


@contextlib.contextmanager
def loopback_collector() -> Iterator[LoopbackCollector]:
    collector = LoopbackCollector()
    thread = threading.Thread(target=collector._server.serve_forever, daemon=True)
    thread.start()
    try:
        yield collector
    finally:
        collector._server.shutdown()
        collector._server.server_close()
