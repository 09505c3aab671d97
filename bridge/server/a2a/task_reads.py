"""What a task read returns (``tasks/get``, ``ListTasks``): the history length a request
asks for, the paging it may ask, and a task trimmed to both. Kept apart from the
handler, which only applies them."""

from __future__ import annotations

from typing import Literal, Protocol

from a2a.types import ListTasksRequest, Task, TaskState
from a2a.utils.constants import MAX_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError


class _HistoryLength(Protocol):
    history_length: int

    def HasField(self, field_name: Literal["history_length"]) -> bool: ...


def history_length(request: _HistoryLength) -> int | None:
    """The ``historyLength`` a request asks for (``None``: all of it); a negative one is
    the caller's mistake."""
    if not request.HasField("history_length"):
        return None
    if request.history_length < 0:
        raise InvalidParamsError(
            message=f"historyLength must be 0 or more, not {request.history_length}"
        )
    return request.history_length


def check_list_request(params: ListTasksRequest) -> None:
    """What ListTasks asks is something the store can answer (A2A 1.0 §3.1.4)."""
    history_length(params)
    if params.HasField("page_size") and not 1 <= params.page_size <= MAX_LIST_TASKS_PAGE_SIZE:
        raise InvalidParamsError(
            message=f"pageSize must be 1 to {MAX_LIST_TASKS_PAGE_SIZE}, not {params.page_size}"
        )
    if params.status not in TaskState.values():  # an unknown number (gRPC; JSON is screened)
        raise InvalidParamsError(message=f"status {params.status} is not a task state")


def trimmed(task: Task, history: int | None, *, artifacts: bool = True) -> Task:
    """``task`` with only its last ``history`` messages (all: ``None``), and without its
    artifacts unless ``artifacts``."""
    if history is not None and len(task.history) > history:
        kept = list(task.history)[-history:] if history > 0 else []
        del task.history[:]
        task.history.extend(kept)
    if not artifacts:
        task.ClearField("artifacts")
    return task
