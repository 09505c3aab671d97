"""A task that runs on another replica, followed here: ``tasks/resubscribe``,
``tasks/cancel`` and ``tasks/get`` on a replica that does not run the task.

A :class:`MirrorTask` is a :class:`~trpc_bridge.server.tasks.live_task.LiveTask` built from
the stored snapshot and the frame count it includes; a follower reads every later frame
from the fan-out and publishes it here, so local subscribers see snapshot + the rest,
nothing twice. Cancelling it asks the replica that runs the task (a command through the
fan-out) and waits for the ``canceled`` frame to come back. It ends with the run's final
frame, or when nobody here follows it any more.
"""

from __future__ import annotations

import asyncio
import contextlib

from a2a.types import Task
from a2a.utils.errors import InternalError

from trpc_bridge.server.replicas.fanout import FanOut
from trpc_bridge.server.tasks.live_task import Lease, LiveTask, OnEnd, ends_run

#: Seconds a cancel waits for the replica that runs the task to confirm it.
CANCEL_WAIT = 15.0


class MirrorTask(LiveTask):
    remote = True
    lease: Lease
    _fanout: FanOut
    _asked: set[asyncio.Future[None]]

    @classmethod
    def following(
        cls, task: Task, lease: Lease, *, owner: str, coalesce_after: int, fanout: FanOut
    ) -> MirrorTask:
        """The stored ``task`` whose run another replica holds under ``lease``: a live task
        revived from it (as a parked one is), followed through ``fanout``."""
        mirror = cls.revived(task, owner=owner, coalesce_after=coalesce_after)
        mirror.sequence = lease.seq
        mirror.lease = lease
        mirror._fanout = fanout
        mirror._asked = set()
        return mirror

    def follow(self, on_end: OnEnd) -> None:
        self._producer = asyncio.create_task(self._follow(on_end))

    async def _follow(self, on_end: OnEnd) -> None:
        try:
            async for seq, frame in self._fanout.follow(self.task_id, self.sequence):
                if seq != self.sequence + 1:  # cannot happen with an intact log
                    continue
                self.publish(frame)
                if ends_run(frame):
                    break
        finally:
            await on_end(self)

    def ask(self, verb: str) -> None:
        """Send ``verb`` (``cancel``, ``push``) to the replica that runs the task."""
        sent = asyncio.ensure_future(
            self._fanout.command(self.lease.incarnation, verb, self.task_id)
        )
        self._asked.add(sent)
        sent.add_done_callback(self._asked.discard)

    def cancel(self) -> None:
        self.ask("cancel")

    def interrupt(self, reason: str) -> None:
        """Shutting down here does not end a run elsewhere: stop following it."""
        self.stop()

    def stop(self) -> None:
        if self._producer is not None:
            self._producer.cancel()

    async def cancelled(self) -> Task:
        self.cancel()
        try:
            await asyncio.wait_for(self._finished.wait(), CANCEL_WAIT)
        except TimeoutError:
            with contextlib.suppress(Exception):
                self.stop()
            raise InternalError(
                message=f"the replica running task {self.task_id} did not confirm the cancel"
            ) from None
        return self.snapshot()
