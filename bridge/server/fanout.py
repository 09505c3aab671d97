"""Live frames shared between replicas: what a fan-out backend offers.

The replica that runs a task publishes every frame it delivers, numbered (``seq``, from
1, per run); any replica can follow a task from a snapshot's ``seq`` onwards and gets
each later frame once, in order. Backends: PostgreSQL ``LISTEN/NOTIFY`` over an event
table (:mod:`~trpc_bridge.server.fanout_pg`) and Redis Streams
(:mod:`~trpc_bridge.server.fanout_redis`).
"""

from __future__ import annotations

from typing import Protocol

from trpc_bridge.codecs.encoding import StreamFrame


class FanOut(Protocol):
    def publish(self, task_id: str, seq: int, frame: StreamFrame) -> None:
        """Queue frame ``seq`` of ``task_id`` (sent in the background, in order)."""

    async def reset(self, task_id: str) -> None:
        """A new run of ``task_id`` starts at seq 1: forget an earlier run's frames."""

    async def ended(self, frame: StreamFrame) -> None:
        """Another replica ended the task (its replica died): tell its followers."""
