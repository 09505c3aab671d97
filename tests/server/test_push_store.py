"""Push-notification configs live in the task store's database when there is one: they
survive a restart (and every replica reads the same ones), with trpc-style task ids
longer than a2a-sdk's 36-character column (PostgreSQL would refuse them unwidened)."""

from __future__ import annotations

from a2a.types import ListTaskPushNotificationConfigsRequest, TaskPushNotificationConfig

from trpc_bridge.agents.tck import tck_agent
from trpc_bridge.server import BridgeServer, Durability, PushOptions, ServerOptions
from trpc_bridge.server.options import PushPolicy

from .helpers import as_user, sdk_client
from .test_invocation_modes import send, tck_message


async def test_push_configs_survive_a_restart(task_store_url: str) -> None:
    options = ServerOptions(
        grpc_port=None,
        durability=Durability(task_store=task_store_url),
        push=PushOptions(policy=PushPolicy(allow_loopback=True)),
    )
    async with BridgeServer(tck_agent(), options) as server:
        client = await sdk_client(server.agent_card(), "jsonrpc-1.0", streaming=False)
        (answer,) = await send(client, tck_message("tck-complete-task"))
        task_id = answer.task.id
        assert len(task_id) > 36
        config = TaskPushNotificationConfig(
            task_id=task_id, id="hook-1", url="http://127.0.0.1:9/hook", token="tok"
        )
        await client.create_task_push_notification_config(config, context=as_user("alice"))
        await client.close()
    async with BridgeServer(tck_agent(), options) as restarted:
        client = await sdk_client(restarted.agent_card(), "jsonrpc-1.0", streaming=False)
        listing = ListTaskPushNotificationConfigsRequest(task_id=task_id)
        found = await client.list_task_push_notification_configs(listing, context=as_user("alice"))
        assert [(c.id, c.url, c.token) for c in found.configs] == [
            ("hook-1", "http://127.0.0.1:9/hook", "tok")
        ]
        await client.close()
