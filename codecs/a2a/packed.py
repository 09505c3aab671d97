"""A unary answer beside the Python values it was packed from.

trpc's unary answer (``docs/specs/trpc-interaction.md`` §2.6) is a ``Message``, or a
completed ``Task`` whose history is every message but the last and whose artifact is the
last. The packer (``codecs/trpc/runs.py``) fills that protobuf from each message's
parts and metadata mapping; the task store keeps the protobuf and a2a-sdk's transports
send it. A writer of the 0.3 JSON answer (:mod:`~trpc_bridge.codecs.a2a.json03`) would
otherwise read every field and metadata ``Struct`` of it back, the larger part of a
unary call's answer: a :class:`PackedResult` hands it the ids, parts and mappings the
packer used instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from a2a.types import Message, Part, Task


class Packed(Protocol):
    """A message (or the artifact) as the packer filled it: its parts, and the mapping its
    metadata ``Struct`` was filled from (empty: no metadata)."""

    @property
    def parts(self) -> Sequence[Part]: ...

    @property
    def metadata(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class PackedResult:
    """``proto`` (a ``Message``, or a ``Task``) and what it was packed from:
    ``messages`` are the one message, or the task's history then its artifact, and
    ``ids`` the id each was given (message id, artifact id)."""

    proto: Message | Task
    messages: Sequence[Packed]
    ids: Sequence[str]


def as_result(answer: Message | Task | PackedResult) -> Message | Task:
    """The protobuf of an answer, packed or not."""
    return answer.proto if isinstance(answer, PackedResult) else answer
