"""tfrs progress beside another stream encoding (seed 000: "beside, not instead of").

:class:`ProgressOverlay` wraps any stream encoder (trpc v0, plain A2A, …) and adds, for
each agent event, the ``working`` updates of its progress blocks *before* the frames
the inner encoder makes of the same event: a terminal status is always the last frame,
so nothing of the turn's progress follows it. At the end of a normal turn, tool calls
still open are closed ``done`` before the inner encoder's final frames; a terminal error
aborts them first (the producer does it).
"""

from __future__ import annotations

from typing import Any, Protocol

from trpc_bridge.codecs.tfrs.producer import ProgressProducer, working_update
from trpc_bridge.events import AgentEvent


class StreamEncoding(Protocol):
    """What the overlay needs of the encoder it wraps."""

    @property
    def done(self) -> bool: ...

    def start(self, *, app_name: str, user_id: str) -> Any: ...

    def encode(self, event: AgentEvent) -> list[Any]: ...

    def close(self) -> list[Any]: ...


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

    @property
    def done(self) -> bool:
        return self.inner.done

    def start(self, *, app_name: str, user_id: str) -> Any:
        return self.inner.start(app_name=app_name, user_id=user_id)

    def _frames(self, updates: list[Any]) -> list[Any]:
        return [
            working_update(u, task_id=self.task_id, context_id=self.context_id) for u in updates
        ]

    def encode(self, event: AgentEvent) -> list[Any]:
        if self.inner.done:
            return []
        if event.is_runner_completion():
            updates = self.producer.close()
        else:
            updates = self.producer.updates(event)
        return self._frames(updates) + self.inner.encode(event)

    def close(self) -> list[Any]:
        if self.inner.done:
            return []
        return self._frames(self.producer.close()) + self.inner.close()
