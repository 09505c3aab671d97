"""tfrs progress beside another stream encoding (never instead of it:
``docs/specs/tfrs-progress.md``), registered on the encoding seam as an overlay
(:data:`TFRS_PROGRESS`).

A caller asks for it per request: the A2A extension ``tfrs-progress`` (the
``A2A-Extensions`` header, gRPC metadata, or ``X-A2A-Extensions`` on 0.3), or
``"tfrs_progress": true`` in the request message's metadata (for callers that cannot set
headers, such as trpc-agent-go's client, which forwards its runtime state there).

:class:`ProgressOverlay` wraps whichever stream encoder the caller got (trpc, plain A2A,
…) and adds, for each agent event, the ``working`` updates of its progress blocks
*before* the frames the inner encoder makes of the same event: a terminal status is
always the last frame, so nothing of the turn's progress follows it. At the end of a
normal turn, tool calls still open are closed ``done`` before the inner encoder's final
frames; a terminal error aborts them first (the producer does it). ``message/send`` has
no stream to carry progress, so unary runs are left alone.
"""

from __future__ import annotations

from trpc_bridge.codecs.encoding import EncodingRequest, RunTarget, StreamEncoding, StreamFrame
from trpc_bridge.codecs.tfrs.envelope import EXTENSION_URI, REQUEST_METADATA_KEY
from trpc_bridge.codecs.tfrs.producer import ProgressProducer, ProgressUpdate, working_update
from trpc_bridge.events import AgentEvent


class ProgressOverlay:
    """``inner``'s frames, with one turn's progress updates woven in."""

    def __init__(
        self,
        inner: StreamEncoding,
        *,
        task_id: str,
        context_id: str,
        producer: ProgressProducer | None = None,
    ) -> None:
        self.inner = inner
        self.task_id = task_id
        self.context_id = context_id
        self.producer = producer or ProgressProducer()
        #: Mirrors the inner encoder's (updated after each call).
        self.done = inner.done

    def start(self, *, app_name: str, user_id: str) -> list[StreamFrame]:
        return self.inner.start(app_name=app_name, user_id=user_id)

    def _frames(self, updates: list[ProgressUpdate]) -> list[StreamFrame]:
        return [
            working_update(u, task_id=self.task_id, context_id=self.context_id) for u in updates
        ]

    def encode(self, event: AgentEvent) -> list[StreamFrame]:
        if self.inner.done:
            return []
        if event.is_runner_completion():
            updates = self.producer.close()
        else:
            updates = self.producer.updates(event)
        frames = self._frames(updates) + self.inner.encode(event)
        self.done = self.inner.done
        return frames

    def close(self) -> list[StreamFrame]:
        if self.inner.done:
            return []
        frames = self._frames(self.producer.close()) + self.inner.close()
        self.done = self.inner.done
        return frames


def wants_progress(request: EncodingRequest) -> bool:
    return EXTENSION_URI in request.extensions or request.metadata.get(REQUEST_METADATA_KEY) is True


class TfrsProgress:
    """The seam's overlay: progress for callers that ask for it."""

    name = "tfrs-progress"

    def accepts(self, request: EncodingRequest) -> bool:
        return wants_progress(request)

    def wrap(self, encoder: StreamEncoding, run: RunTarget) -> StreamEncoding:
        return ProgressOverlay(encoder, task_id=run.task_id, context_id=run.context_id)


TFRS_PROGRESS = TfrsProgress()
