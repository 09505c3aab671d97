"""How a task that stopped running without finishing reads: ``failed``, with an
``interrupted`` error that says why (the server shut down, crashed, or lost its
database lease), in the same structured-error shape as an agent failure
(docs/specs/trpc-interaction.md §4), so trpc-agent-go and a2a-sdk clients both read it."""

from __future__ import annotations

from a2a.types import TaskStatusUpdateEvent

from trpc_bridge.codecs.trpc.stream_frames import error_status
from trpc_bridge.events import AgentEvent

#: ``error_type`` of an interrupted task.
INTERRUPTED = "interrupted"

#: Why, for each way a run can be cut.
SHUTDOWN = "the server shut down before the task finished"
RESTARTED = "the server stopped while the task ran (restarted since)"
REPLICA_LOST = "replica {replica} stopped answering while the task ran"
LEASE_LOST = "this replica was declared dead by another one while the task ran"


def interrupted_status(task_id: str, context_id: str, reason: str) -> TaskStatusUpdateEvent:
    """The final ``failed`` status of a task cut for ``reason``."""
    failure = AgentEvent.failure(f"task interrupted: {reason}", type=INTERRUPTED)
    return error_status(failure, task_id=task_id, context_id=context_id)
