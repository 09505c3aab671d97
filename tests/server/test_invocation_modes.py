"""A2A's four invocation modes (docs/conformance.md) on every 1.0 transport, with a2a-sdk clients:
blocking, ``return_immediately`` (then ``tasks/get`` and subscribe), streaming, and push
notifications to a real webhook receiver on loopback — its outage (retries), a redelivery
(duplicate, deduped by the notification id), and the caller going away and coming back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from a2a.client.client import Client
from a2a.types import (
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trpc_bridge.agents.scenarios import SCRIPTS, ScenarioAgent
from trpc_bridge.agents.tck import tck_agent
from trpc_bridge.server import BridgeServer, PushOptions, ServerOptions
from trpc_bridge.server.http.listener import serving
from trpc_bridge.server.options import OpsOptions, PushPolicy
from trpc_bridge.server.push.delivery import NOTIFICATION_ID_HEADER, RetryPolicy
from trpc_bridge.server.push.policy import WebhookScreen

from .helpers import as_user, go_message, jsonrpc, sdk_client

TRANSPORTS_1_0 = ["jsonrpc-1.0", "rest-1.0", "grpc-1.0"]
TOKEN = "Bearer s3cret"


@dataclass
class Webhook:
    """A webhook receiver that answers ``failures`` first (503 = outage, 500 = crashed
    after taking the update), then 200; it keeps what it received and dedupes by id."""

    url: str = ""
    failures: list[int] = field(default_factory=list)
    received: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def endpoint(self, request: Request) -> Response:
        body = await request.json()
        notification_id = request.headers.get(NOTIFICATION_ID_HEADER, "")
        self.received.append((notification_id, request.headers.get("authorization", ""), body))
        self.arrived.set()
        return Response(status_code=self.failures.pop(0) if self.failures else 200)

    def unique(self) -> dict[str, dict[str, Any]]:
        """What a receiver that dedupes on the notification id keeps."""
        return {nid: body for nid, _, body in self.received}

    def states(self) -> list[str]:
        return [
            body["statusUpdate"]["status"]["state"]
            for body in self.unique().values()
            if "statusUpdate" in body
        ]


@contextlib.asynccontextmanager
async def webhook(failures: list[int] | None = None) -> AsyncIterator[Webhook]:
    hook = Webhook(failures=list(failures or []))
    app = Starlette(routes=[Route("/hook", hook.endpoint, methods=["POST"])])
    async with serving(app) as url:
        hook.url = f"{url}/hook"
        yield hook


@contextlib.asynccontextmanager
async def tck_server(policy: PushPolicy | None = None) -> AsyncIterator[BridgeServer]:
    options = ServerOptions(push=PushOptions(policy=policy or PushPolicy(allow_loopback=True)))
    async with BridgeServer(tck_agent(), options) as server:
        assert server.push is not None
        server.push.retry = RetryPolicy(attempts=4, first_delay=0.01, max_delay=0.05)
        yield server


def tck_message(prefix: str, *, task_id: str = "") -> Message:
    return Message(
        message_id=f"{prefix}-{uuid.uuid4()}",
        task_id=task_id,
        role=Role.ROLE_USER,
        parts=[Part(text="hello")],
    )


def push_config(url: str, config_id: str = "hook-1") -> TaskPushNotificationConfig:
    scheme, credentials = TOKEN.split(" ")
    return TaskPushNotificationConfig(
        id=config_id,
        url=url,
        token="tok-1",
        authentication=AuthenticationInfo(scheme=scheme, credentials=credentials),
    )


async def send(
    client: Client, message: Message, *, user: str = "alice", **config: Any
) -> list[Any]:
    request = SendMessageRequest(message=message, configuration=SendMessageConfiguration(**config))
    return [r async for r in client.send_message(request, context=as_user(user))]


async def wait_for(condition: Any, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("transport", TRANSPORTS_1_0)
async def test_blocking_return_immediately_and_streaming(transport: str) -> None:
    async with tck_server() as server:
        blocking = await sdk_client(server.agent_card(), transport, streaming=False)
        (answer,) = await send(blocking, tck_message("tck-artifact-text"))
        assert answer.task.status.state == TaskState.TASK_STATE_COMPLETED
        assert answer.task.artifacts[0].parts[0].text == "Generated text content"
        (direct,) = await send(blocking, tck_message("tck-message-response"))
        assert direct.message.parts[0].text == "Direct message response"

        # return_immediately: the task comes back before the run ends; get / subscribe.
        (early,) = await send(
            blocking, tck_message("test-resubscribe-message-id"), return_immediately=True
        )
        task_id = early.task.id
        assert early.task.status.state in (
            TaskState.TASK_STATE_SUBMITTED,
            TaskState.TASK_STATE_WORKING,
        )
        streaming = await sdk_client(server.agent_card(), transport, streaming=True)
        events = [
            e
            async for e in streaming.subscribe(
                SubscribeToTaskRequest(id=task_id), context=as_user("alice")
            )
        ]
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
        got = await blocking.get_task(GetTaskRequest(id=task_id), context=as_user("alice"))
        assert got.status.state == TaskState.TASK_STATE_COMPLETED

        frames = await send(streaming, tck_message("tck-stream-001"))
        states = [f.status_update.status.state for f in frames if f.HasField("status_update")]
        assert states[-1] == TaskState.TASK_STATE_COMPLETED
        assert any(f.HasField("artifact_update") for f in frames)


@pytest.mark.parametrize("transport", TRANSPORTS_1_0)
async def test_push_config_crud_is_scoped_to_the_caller(transport: str) -> None:
    async with tck_server() as server, webhook() as hook:
        client = await sdk_client(server.agent_card(), transport, streaming=False)
        (answer,) = await send(client, tck_message("tck-complete-task"))
        task_id = answer.task.id
        config = push_config(hook.url)
        config.task_id = task_id
        alice, bob = as_user("alice"), as_user("bob")

        created = await client.create_task_push_notification_config(config, context=alice)
        assert (created.id, created.url, created.task_id) == ("hook-1", hook.url, task_id)
        get = GetTaskPushNotificationConfigRequest(task_id=task_id, id="hook-1")
        assert (await client.get_task_push_notification_config(get, context=alice)).url == hook.url
        listing = ListTaskPushNotificationConfigsRequest(task_id=task_id)
        listed = await client.list_task_push_notification_configs(listing, context=alice)
        assert [c.id for c in listed.configs] == ["hook-1"]

        # Another caller sees no such task, so neither its configs.
        with pytest.raises(TaskNotFoundError):
            await client.get_task_push_notification_config(get, context=bob)
        with pytest.raises(TaskNotFoundError):
            await client.create_task_push_notification_config(config, context=bob)

        delete = DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="hook-1")
        await client.delete_task_push_notification_config(delete, context=alice)
        await client.delete_task_push_notification_config(delete, context=alice)  # idempotent
        with pytest.raises(TaskNotFoundError):
            await client.get_task_push_notification_config(get, context=alice)


@pytest.mark.parametrize("transport", TRANSPORTS_1_0)
async def test_push_delivers_every_update_with_auth_and_id_to_a_caller_that_left(
    transport: str,
) -> None:
    """The caller registers a webhook inline and goes away (return_immediately); the
    updates arrive at the webhook; the caller comes back and reads the same end state."""
    async with tck_server() as server, webhook() as hook:
        client = await sdk_client(server.agent_card(), transport, streaming=False)
        (early,) = await send(
            client,
            tck_message("tck-stream-001"),
            return_immediately=True,
            task_push_notification_config=push_config(hook.url),
        )
        await client.close()  # the caller is gone while the task runs
        await wait_for(lambda: "TASK_STATE_COMPLETED" in hook.states())
        assert hook.states() == [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED",
        ]
        assert any("artifactUpdate" in body for body in hook.unique().values())
        assert {auth for _, auth, _ in hook.received} == {TOKEN}
        ids = list(hook.unique())
        assert all(i.startswith(f"{early.task.id}:") for i in ids)

        again = await sdk_client(server.agent_card(), transport, streaming=False)
        got = await again.get_task(GetTaskRequest(id=early.task.id), context=as_user("alice"))
        assert got.status.state == TaskState.TASK_STATE_COMPLETED


async def test_push_retries_through_an_outage_and_redelivery_is_deduped() -> None:
    """503 twice (the receiver is down), then a 500 after the receiver took the update
    (it will see it again): every update arrives, in order, and the duplicates carry the
    same id, so the receiver keeps each once."""
    async with tck_server() as server, webhook(failures=[503, 503, 500]) as hook:
        client = await sdk_client(server.agent_card(), "jsonrpc-1.0", streaming=False)
        (parked,) = await send(
            client,
            tck_message("tck-input-required"),
            task_push_notification_config=push_config(hook.url),
        )
        assert parked.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        (done,) = await send(client, tck_message("tck-complete-task", task_id=parked.task.id))
        assert done.task.status.state == TaskState.TASK_STATE_COMPLETED
        assert server.push is not None
        await server.push.flush()
        ids = [nid for nid, _, _ in hook.received]
        assert len(ids) > len(set(ids))  # redelivered
        assert ids[0] == ids[1] == ids[2] == ids[3]  # one update through 503, 503, 500, 200
        assert hook.states()[-1] == "TASK_STATE_COMPLETED"
        sequence = [int(nid.rsplit(":", 1)[1]) for nid in hook.unique()]
        assert sequence == sorted(sequence) == list(range(1, len(sequence) + 1))


async def test_webhooks_on_internal_addresses_are_refused() -> None:
    async with tck_server(PushPolicy(allow_hosts=("hooks.example.com",))) as server:
        client = await sdk_client(server.agent_card(), "jsonrpc-1.0", streaming=False)
        (answer,) = await send(client, tck_message("tck-complete-task"))
        for url in (
            "http://127.0.0.1:9/hook",  # loopback, not allowed here
            "http://169.254.169.254/latest/meta-data",  # cloud metadata
            "http://10.0.0.1/hook",
            "https://evil.example.org/hook",  # not on the allow-list
            "file:///etc/passwd",
        ):
            config = push_config(url)
            config.task_id = answer.task.id
            with pytest.raises(InvalidParamsError):
                await client.create_task_push_notification_config(config, context=as_user("alice"))
    assert await WebhookScreen(PushPolicy()).screen("http://localhost:9/hook")  # loopback


async def test_push_from_a_0_3_stream_carries_every_delta() -> None:
    """A 0.3 ``message/stream`` (the bridge's own route, whose deltas are not protobuf
    until someone needs them) with an inline webhook: the webhook gets every delta."""
    options = ServerOptions(
        grpc_port=None, push=PushOptions(policy=PushPolicy(allow_loopback=True))
    )
    agent = ScenarioAgent("long", SCRIPTS["long"])
    async with (
        BridgeServer(agent, options) as server,
        webhook() as hook,
        httpx.AsyncClient(base_url=server.base_url) as http,
    ):
        config = {"url": hook.url, "token": "tok-1"}
        params = {"message": go_message("hi"), "configuration": {"pushNotificationConfig": config}}
        streamed = await http.post("/", json=jsonrpc("message/stream", params))
        await wait_for(lambda: "TASK_STATE_COMPLETED" in hook.states())
    texts = [
        part["text"]
        for body in hook.unique().values()
        for part in body.get("artifactUpdate", {}).get("artifact", {}).get("parts", [])
        if "text" in part
    ]
    assert "".join(texts) == "".join(_streamed_texts(streamed.text))
    assert len(texts) >= 1000


def _streamed_texts(sse: str) -> list[str]:
    texts = []
    for line in sse.splitlines():
        if line.startswith("data:"):
            result = json.loads(line[5:])["result"]
            if result.get("kind") == "artifact-update":
                texts += [p["text"] for p in result["artifact"]["parts"] if p.get("text")]
    return texts


async def test_push_deliveries_are_counted_by_outcome() -> None:
    """``trpc_bridge.push.deliveries``: the webhook's 400 is a refusal, the rest delivered."""
    reader = InMemoryMetricReader()
    options = ServerOptions(
        push=PushOptions(policy=PushPolicy(allow_loopback=True)),
        grpc_port=None,
        ops=OpsOptions(meter_provider=MeterProvider(metric_readers=[reader])),
    )
    agent = ScenarioAgent("text", SCRIPTS["text"])
    async with (
        BridgeServer(agent, options) as server,
        webhook(failures=[400]) as hook,
        httpx.AsyncClient(base_url=server.base_url) as http,
    ):
        config = {"url": hook.url, "token": "tok-1"}
        params = {"message": go_message("hi"), "configuration": {"pushNotificationConfig": config}}
        await http.post("/", json=jsonrpc("message/stream", params))
        await wait_for(lambda: "TASK_STATE_COMPLETED" in hook.states())
        assert server.push is not None
        await server.push.flush()
    data = reader.get_metrics_data()
    assert data is not None
    counted: dict[Any, Any] = {
        dict(point.attributes or {})["trpc_bridge.outcome"]: getattr(point, "value", None)
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == "trpc_bridge.push.deliveries"
        for point in metric.data.data_points
    }
    assert counted == {"refused": 1, "delivered": len(hook.received) - 1}
