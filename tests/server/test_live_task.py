"""A live task hands its aggregate to the task store once, and never changes it after."""

from __future__ import annotations

from a2a.types import Message, Part, Role, TaskState

from trpc_bridge.server.tasks.live_task import LiveTask


def test_a_frame_after_the_hand_over_leaves_the_stored_task_as_it_was() -> None:
    live = LiveTask(
        task_id="t1",
        context_id="c1",
        owner="alice",
        user_message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="hi")]),
        coalesce_after=64,
    )
    live.publish(live.status_update(TaskState.TASK_STATE_COMPLETED))
    stored = live.hand_over()
    # A shutdown's cancellation after the settled end: the live task says so, the store
    # still builds the task its caller was told.
    live.publish(live.status_update(TaskState.TASK_STATE_CANCELED))
    assert stored.snapshot().status.state == TaskState.TASK_STATE_COMPLETED
    assert live.snapshot().status.state == TaskState.TASK_STATE_CANCELED
    assert [m.message_id for m in live.snapshot().history] == ["m1"]
