"""The push-notification part of the A2A request handler: config create / get / list /
delete, and configs sent inline with a message (``configuration.taskPushNotificationConfig``).

Every method is scoped to the caller: a config can only be attached to a task the caller
owns, and is stored under the caller's identity in a2a-sdk's config store, so another
caller can neither read nor delete it. URLs are screened when a config is created
(:class:`~trpc_bridge.server.push.policy.WebhookScreen`). Without push delivery configured
every method answers ``PushNotificationNotSupportedError``.
"""

from __future__ import annotations

from a2a.server.context import ServerCallContext
from a2a.server.tasks.push_notification_config_store import normalize_push_notification_config
from a2a.types import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig,
)
from a2a.utils.errors import (
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
)

from trpc_bridge.names import shown_id
from trpc_bridge.server.a2a.bug_boundary import bug_boundary
from trpc_bridge.server.a2a.call_context import a2a_caller
from trpc_bridge.server.push.delivery import PushDelivery
from trpc_bridge.server.runner import AgentRunner
from trpc_bridge.server.tasks.registry import TaskRegistry
from trpc_bridge.server.tasks.store import owner_context


class PushConfigRequests:
    """Mixed into the request handler, which provides :attr:`push` and :attr:`registry`."""

    push: PushDelivery | None
    runner: AgentRunner

    @property
    def registry(self) -> TaskRegistry:
        raise NotImplementedError

    def _delivery(self) -> PushDelivery:
        if self.push is None:
            raise PushNotificationNotSupportedError
        return self.push

    async def attach_push_config(
        self, task_id: str, config: TaskPushNotificationConfig, owner: str, *, running: bool
    ) -> TaskPushNotificationConfig:
        """Store ``config`` for ``owner``'s task ``task_id`` (which the caller checked);
        a ``running`` task (or one about to run) gets its next updates delivered."""
        push = self._delivery()
        reason = await push.policy.screen(config.url, must_resolve=False)
        if reason is not None:
            raise InvalidParamsError(message=reason)
        normalized = normalize_push_notification_config(task_id, config)
        stored = await push.store.set_info(task_id, normalized, owner_context(owner))
        if running:
            push.watch(task_id)
        return stored or normalized

    async def watch_stored_configs(self, task_id: str, owner: str) -> None:
        """Deliver ``task_id``'s next updates to the configs stored for it."""
        push = self._delivery()
        if await push.store.get_info(task_id, owner_context(owner)):
            push.watch(task_id)

    async def _owned(self, task_id: str, context: ServerCallContext) -> str:
        """The caller, once it is known to own ``task_id``."""
        owner = a2a_caller(context, self.runner).user_id
        known = self.registry.live(task_id, owner) or await self.registry.stored(task_id, owner)
        if known is None:
            raise TaskNotFoundError(message=f"Task {shown_id(task_id)} not found")
        return owner

    async def _configs(self, task_id: str, owner: str) -> list[TaskPushNotificationConfig]:
        return await self._delivery().store.get_info(task_id, owner_context(owner))

    @bug_boundary
    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        self._delivery()
        owner = await self._owned(params.task_id, context)
        live = self.registry.live(params.task_id, owner)
        running = live is not None and not live.remote
        stored = await self.attach_push_config(params.task_id, params, owner, running=running)
        if not running:  # it may run on another replica: that one delivers
            await self.registry.ask_runner(params.task_id, owner, "push")
        return stored

    @bug_boundary
    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        self._delivery()
        owner = await self._owned(params.task_id, context)
        wanted = params.id or params.task_id
        for config in await self._configs(params.task_id, owner):
            if config.id == wanted:
                return config
        raise TaskNotFoundError(
            message=f"push notification config {shown_id(wanted)} not found for task "
            f"{shown_id(params.task_id)}"
        )

    @bug_boundary
    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        self._delivery()
        owner = await self._owned(params.task_id, context)
        return ListTaskPushNotificationConfigsResponse(
            configs=await self._configs(params.task_id, owner)
        )

    @bug_boundary
    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        push = self._delivery()
        owner = await self._owned(params.task_id, context)
        # Deleting what is not there is not an error (idempotent, A2A 1.0 §3.1.9).
        await push.store.delete_info(params.task_id, owner_context(owner), params.id or None)
