"""Webhook URLs the bridge will never call are refused when the config is created, in
every spelling of a loopback or private address (not only the canonical ones), on every
transport; a config that a stricter server refuses at delivery is logged once, not once
per update."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from a2a.types import TaskState
from a2a.utils.errors import InvalidParamsError

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.agents.tck import tck_agent
from trpc_bridge.events import AgentEvent, AgentRequest
from trpc_bridge.server import BridgeServer, Durability, PushOptions, ServerOptions
from trpc_bridge.server.options import PushPolicy
from trpc_bridge.server.push.policy import MAX_URL_LENGTH, WebhookScreen

from .helpers import as_user, sdk_client
from .test_invocation_modes import push_config, send, tck_message, webhook

#: URL → the refusal's message.
REFUSED = {
    "http://localhost/": "push notification host 'localhost' is not a public address",
    "http://LOCALHOST./hook": "push notification host 'localhost' is not a public address",
    "http://hooks.localhost/": "push notification host 'hooks.localhost' is not a public address",
    "http://127.1/": "push notification host '127.1' is not a public address",
    "http://2130706433/": "push notification host '2130706433' is not a public address",
    "http://0x7f000001/": "push notification host '0x7f000001' is not a public address",
    "http://0177.0.0.1/": "push notification host '0177.0.0.1' is not a public address",
    "http://0/": "push notification host '0' is not a public address",
    "http://10.1/": "push notification host '10.1' is not a public address",
    "http://[::ffff:127.0.0.1]/": "push notification host '::ffff:127.0.0.1' is not a public "
    "address",
    "http://[::ffff:a9fe:a9fe]/": "push notification host '::ffff:a9fe:a9fe' is not a public "
    "address",
    "http://hooks.example.com:99999/": "push notification url is not a URL with a valid port "
    "(1-65535)",
    "http://hooks.example.com:0/": "push notification url is not a URL with a valid port (1-65535)",
    "http://hooks.example.com/" + "x" * 100_000: "push notification url is longer than "
    f"{MAX_URL_LENGTH} characters",
}


@pytest.mark.parametrize("transport", ["jsonrpc-1.0", "rest-1.0", "grpc-1.0", "grpc-0.3"])
async def test_non_canonical_internal_urls_are_refused_at_creation(transport: str) -> None:
    async with BridgeServer(tck_agent()) as server:
        client = await sdk_client(server.agent_card(), transport, streaming=False)
        (answer,) = await send(client, tck_message("tck-complete-task"))
        refusals = {}
        for url in REFUSED:
            config = push_config(url)
            config.task_id = answer.task.id
            with pytest.raises(InvalidParamsError) as refused:
                await client.create_task_push_notification_config(config, context=as_user("alice"))
            refusals[url] = refused.value.message
        await client.close()
    assert refusals == REFUSED


async def test_a_name_that_resolves_inward_is_refused_at_creation() -> None:
    # The machine's own name resolves to loopback or to a private address, like most
    # internal names: refused before any delivery is tried.
    name = socket.gethostname()
    addresses = {info[4][0] for info in socket.getaddrinfo(name, None)}
    if any(
        WebhookScreen(PushPolicy()).refusal(f"http://{address}/") is None for address in addresses
    ):
        pytest.skip(f"{name} resolves to a public address here: {sorted(addresses)}")
    policy = WebhookScreen(PushPolicy())
    assert policy.refusal(f"http://{name}/hook") is None  # a name: judged by resolving it
    reason = await policy.screen(f"http://{name}/hook")
    assert reason is not None and reason.startswith(f"push notification host '{name.lower()}'")
    # A name that does not resolve (yet) can be registered; nothing is delivered to it.
    unresolved = "http://no-such-host.invalid/"
    assert await policy.screen(unresolved, must_resolve=False) is None
    assert await policy.screen(unresolved) == (
        "push notification host 'no-such-host.invalid' does not resolve"
    )


def _parking_agent() -> FunctionAgent:
    """Asks for input first; the follow-up streams 100 deltas."""

    async def run(request: AgentRequest) -> AsyncIterator[AgentEvent]:
        if request.text == "start":
            yield AgentEvent.task_status("input-required", "go on?")
            return
        for i in range(100):
            yield AgentEvent.text_delta(f"d{i} ", "chatcmpl-1")

    return FunctionAgent(name="parking", description="parks, then streams", fn=run)


async def test_a_config_refused_at_delivery_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A config created on a server that allowed loopback webhooks, whose task goes on on
    one restarted without ``--push-allow-loopback``: 100 updates, no delivery, one line."""
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    lenient = ServerOptions(
        grpc_port=None,
        durability=Durability(task_store=store),
        push=PushOptions(policy=PushPolicy(allow_loopback=True)),
    )
    async with webhook() as hook:
        async with BridgeServer(_parking_agent(), lenient) as server:
            client = await sdk_client(server.agent_card(), "jsonrpc-1.0", streaming=False)
            message = tck_message("park")
            message.parts[0].text = "start"
            (parked,) = await send(
                client, message, task_push_notification_config=push_config(hook.url)
            )
            assert parked.task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            assert server.push is not None
            await server.push.flush()
            await client.close()
        delivered = len(hook.received)
        strict = ServerOptions(grpc_port=None, durability=Durability(task_store=store))
        caplog.set_level(logging.WARNING, logger="trpc_bridge.server.push.delivery")
        async with BridgeServer(_parking_agent(), strict) as restarted:
            client = await sdk_client(restarted.agent_card(), "jsonrpc-1.0", streaming=True)
            follow_up = tck_message("more", task_id=parked.task.id)
            frames = await send(client, follow_up)
            assert restarted.push is not None
            await restarted.push.flush()
            await client.close()
    assert len(frames) > 100
    assert len(hook.received) == delivered  # nothing from the strict server
    lines = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert lines == [
        f"push for task {parked.task.id} refused, config hook-1 gets no updates: "
        "push notification host '127.0.0.1' is not a public address"
    ]
