"""The client side of tfrs progress (docs/specs/tfrs-progress.md) for :class:`RemoteAgent`.

A :class:`ProgressTap` sits in front of the content decoder on every result a remote
agent sends — its stream, a resubscription, a ``tasks/get`` snapshot — and takes the
progress out: each new (deduplicated) item goes to the caller's sink, and, for a peer
that does not speak trpc's dialect, becomes reasoning and tool events (a trpc peer's
artifacts already carry those). The decoder sees the result without its progress, so
an envelope's text fallback is never shown as answer text.

Once a peer has shown it speaks tfrs (its card declares the extension, or an update
carried a ``tfrs`` key), its plain working text is progress as well: working text is
never the reply (``docs/specs/tfrs-progress.md`` §7, departure 2). Before that, or for peers that
never do, plain working text keeps the meaning the content decoder gives it.
"""

from __future__ import annotations

from collections.abc import Callable

from trpc_bridge.codecs.a2a.frames import Frame
from trpc_bridge.codecs.tfrs import (
    EXTENSION_URI,
    NO_ENVELOPE,
    PROGRESS_FRAMES,
    ProgressConsumer,
    ProgressEvents,
    ProgressItem,
    content_only,
)
from trpc_bridge.events import AgentEvent

#: Receives each new progress item as it arrives.
ProgressSink = Callable[[ProgressItem], None]

#: The request header that asks for A2A extensions (a2a-sdk reads it on every
#: transport; gRPC gets it as lower-cased metadata), and its A2A 0.3 spelling.
EXTENSIONS_HEADER = "A2A-Extensions"
LEGACY_EXTENSIONS_HEADER = "X-A2A-Extensions"


def progress_headers(version: str) -> dict[str, str]:
    """Headers that ask a server for tfrs progress on an endpoint of A2A ``version``."""
    headers = {EXTENSIONS_HEADER: EXTENSION_URI}
    if version == "0.3":
        headers[LEGACY_EXTENSIONS_HEADER] = EXTENSION_URI
    return headers


class ProgressTap:
    """One run's (or one subscription's) progress."""

    def __init__(
        self,
        *,
        sink: ProgressSink | None,
        as_events: bool,
        invocation_id: str = "",
        author: str = "",
        consumer: ProgressConsumer | None = None,
        speaks_tfrs: bool = False,
    ) -> None:
        self.consumer = consumer or ProgressConsumer()
        self._sink = sink
        self._events = ProgressEvents(invocation_id, author) if as_events else None
        self.speaks_tfrs = speaks_tfrs

    def take(self, frame: Frame) -> tuple[list[AgentEvent], Frame]:
        """The events the progress in ``frame`` makes, and the frame for the decoder."""
        if not isinstance(frame, PROGRESS_FRAMES):  # most of a stream: nothing to look at
            return [], frame
        events: list[AgentEvent] = []
        for item in self.consumer.feed_frame(frame):
            self.speaks_tfrs = self.speaks_tfrs or item.problem != NO_ENVELOPE
            if self._sink is not None:
                self._sink(item)
            if self._events is not None:
                self._events.plain_progress = self.speaks_tfrs
                events.extend(self._events.events(item))
        return events, content_only(frame, all_working=self.speaks_tfrs)
