"""A unary answer beside the Python values it was packed from.

trpc's unary answer (``docs/specs/trpc-interaction.md`` §2.6) is a ``Message``, or a
completed ``Task`` whose history is every message but the last and whose artifact is the
last. The packer (``codecs/trpc/runs.py``) fills that protobuf from each message's
parts and metadata mapping; the task store keeps the protobuf and a2a-sdk's transports
send it. A writer of the 0.3 JSON answer (:mod:`~trpc_bridge.codecs.a2a.json03`) would
otherwise read every field and metadata ``Struct`` of it back, the larger part of a
unary call's answer: a :class:`PackedResult` hands it the ids, parts and mappings the
packer used instead, and the protobuf is only built when something asks for it (the
store, once the answer has left: ``server/a2a/after_answer.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from a2a.types import Message, Part, Task, TaskStatus


class Packed(Protocol):
    """A message (or the artifact) as the packer filled it: its parts, and the mapping its
    metadata ``Struct`` was filled from (empty: no metadata)."""

    @property
    def parts(self) -> Sequence[Part]: ...

    @property
    def metadata(self) -> Mapping[str, Any]: ...


class PackedResult:
    """:attr:`proto` (a ``Message``, or a ``Task``) and what it is packed from:
    ``messages`` are the one message, or the task's history then its artifact, ``ids``
    the id each was given (message id, artifact id); the context, and for a task its id
    and ``status`` (None: the answer is a message). ``build`` makes the protobuf of
    those, once, when :attr:`proto` is first read."""

    __slots__ = ("_build", "_proto", "context_id", "ids", "messages", "status", "task_id")

    def __init__(
        self,
        messages: Sequence[Packed],
        ids: Sequence[str],
        *,
        context_id: str,
        task_id: str = "",
        status: TaskStatus | None = None,
        build: Callable[[], Message | Task],
    ) -> None:
        self.messages = messages
        self.ids = ids
        self.context_id = context_id
        self.task_id = task_id
        self.status = status
        self._build: Callable[[], Message | Task] | None = build
        self._proto: Message | Task | None = None

    @property
    def proto(self) -> Message | Task:
        if self._proto is None:
            assert self._build is not None
            self._proto, self._build = self._build(), None
        return self._proto


def as_result(answer: Message | Task | PackedResult) -> Message | Task:
    """The protobuf of an answer, packed or not."""
    return answer.proto if isinstance(answer, PackedResult) else answer
