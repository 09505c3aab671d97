"""``--auth oidc`` against a real OpenID provider: every door takes the caller from the
verified token (a2a-sdk clients on every transport, AG-UI with ``@ag-ui/client``, the
AgentHost gRPC door), tasks stay their owner's, and a key rotation mid-test is followed."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from typing import Any

import grpc
import httpx
import pytest
from a2a.client.client import ClientCallContext
from a2a.types import SendMessageRequest, a2a_pb2, a2a_pb2_grpc
from agui_checks import run_input
from security_peers import HERE, OidcPeer, new_key
from server.helpers import TRANSPORTS, sdk_client, user_message

from trpc_bridge.server import BridgeServer
from trpc_bridge.v1 import agent_pb2, agent_pb2_grpc

NODE_HARNESS = HERE / "agui_node"

pytestmark = pytest.mark.asyncio(loop_scope="module")


def bearer(token: str) -> ClientCallContext:
    return ClientCallContext(service_parameters={"Authorization": f"Bearer {token}"})


async def _ask(server: BridgeServer, transport: str, token: str) -> str:
    client = await sdk_client(
        server.handler.extended_card or server.agent_card(), transport, streaming=False
    )
    try:
        request = SendMessageRequest(message=user_message("hi", trpc=False))
        results = [r async for r in client.send_message(request, context=bearer(token))]
    finally:
        await client.close()
    return str(results)


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_a2a_sdk_clients_are_the_tokens_subject(
    oidc_server: BridgeServer, idp: OidcPeer, transport: str
) -> None:
    assert "user=alice" in await _ask(oidc_server, transport, idp.token("alice"))
    assert "user=bob" in await _ask(oidc_server, transport, idp.token("bob"))


async def test_agui_with_a_bearer_token(oidc_server: BridgeServer, idp: OidcPeer) -> None:
    body = run_input(thread="t1", run="r1", message="m1")
    headers = {"Authorization": f"Bearer {idp.token('bob')}"}
    async with httpx.AsyncClient() as http:
        answer = await http.post(oidc_server.agui_url, json=body, headers=headers)
        refused = await http.post(oidc_server.agui_url, json=body)
    assert answer.status_code == 200 and "user=bob" in answer.text
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
async def test_ag_ui_client_sends_the_token_in_its_headers(
    oidc_server: BridgeServer, idp: OidcPeer
) -> None:
    headers = {"Authorization": f"Bearer {idp.token('alice')}"}
    node = await asyncio.create_subprocess_exec(
        "node",
        str(NODE_HARNESS / "run.mjs"),
        oidc_server.agui_url,
        "hi",
        env={**os.environ, "AGUI_HEADERS": json.dumps(headers)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await node.communicate()
    summary = json.loads(out)
    assert summary["ok"], (summary["error"], err.decode())
    assert "user=alice" in json.dumps(summary)


async def test_agent_host_door(oidc_server: BridgeServer, idp: OidcPeer) -> None:
    async with grpc.aio.insecure_channel(oidc_server.grpc_address) as channel:
        stub = agent_pb2_grpc.AgentHostStub(channel)  # type: ignore[no-untyped-call]
        request = agent_pb2.AgentRequest(text="hi", user_id="mallory")
        token = idp.token("alice")
        events = [
            e async for e in stub.Run(request, metadata=[("authorization", f"Bearer {token}")])
        ]
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            _ = [e async for e in stub.Run(request, metadata=[("x-user-id", "alice")])]
    assert "user=alice" in str(events)  # the request's own user_id is not believed
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    challenge = dict(refused.value.trailing_metadata() or ())["www-authenticate"]
    assert challenge == 'Bearer realm="trpc-bridge"'


# --- tasks stay their owner's ------------------------------------------------------------


async def _alices_task(server: BridgeServer, token: str) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {"messageId": "m-own", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
            "configuration": {"returnImmediately": True},
        },
    }
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    async with httpx.AsyncClient() as http:
        answer = (await http.post(server.jsonrpc_url, json=body, headers=headers)).json()
    return str(answer["result"]["task"]["id"])


async def _get_task(server: BridgeServer, transport: str, task_id: str, token: str) -> Any:
    """``(found, not_found)`` for GetTask of ``task_id`` with ``token`` on ``transport``."""
    auth = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    async with httpx.AsyncClient() as http:
        if transport == "jsonrpc":
            body = {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task_id}}
            answer = (await http.post(server.jsonrpc_url, json=body, headers=auth)).json()
            return "result" in answer, answer.get("error", {}).get("code") == -32001
        if transport == "rest":
            response = await http.get(f"{server.rest_url}/tasks/{task_id}", headers=auth)
            return response.status_code == 200, response.status_code == 404
    async with grpc.aio.insecure_channel(server.grpc_address) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
        try:
            await stub.GetTask(
                a2a_pb2.GetTaskRequest(id=task_id),
                metadata=[("authorization", f"Bearer {token}")],
            )
        except grpc.aio.AioRpcError as exc:
            return False, exc.code() == grpc.StatusCode.NOT_FOUND
        return True, False


@pytest.mark.parametrize("transport", ["jsonrpc", "rest", "grpc"])
async def test_another_users_task_is_not_found(
    oidc_server: BridgeServer, idp: OidcPeer, transport: str
) -> None:
    task_id = await _alices_task(oidc_server, idp.token("alice"))
    assert await _get_task(oidc_server, transport, task_id, idp.token("alice")) == (True, False)
    assert await _get_task(oidc_server, transport, task_id, idp.token("bob")) == (False, True)


# --- keys ---------------------------------------------------------------------------------


async def test_a_key_rotation_is_followed_without_a_restart(
    oidc_server: BridgeServer, idp: OidcPeer
) -> None:
    keys = oidc_server.gate.authenticator.keys  # type: ignore[attr-defined]
    keys.min_interval = 0.2  # tokens with a new kid may refetch this often
    old = idp.keys[0]
    before = idp.token("alice")
    assert "user=alice" in await _ask(oidc_server, "jsonrpc-1.0", before)
    fetches = keys.fetches
    # The provider starts signing with a new key and still publishes the old one.
    new = new_key("ES256")
    idp.rotate([new, old])
    await asyncio.sleep(0.3)
    rotated = idp.token("bob")
    assert "user=bob" in await _ask(oidc_server, "grpc-1.0", rotated)
    assert "user=alice" in await _ask(oidc_server, "rest-1.0", before)  # old key: still good
    assert keys.fetches == fetches + 1  # one fetch for the new kid, then cached
    for _ in range(3):
        assert "user=bob" in await _ask(oidc_server, "jsonrpc-0.3", rotated)
    assert keys.fetches == fetches + 1
    # The old key is withdrawn: once the cache is older than its maximum age, tokens
    # signed with it are refused.
    idp.rotate([new])
    keys.max_age = 0.2
    await asyncio.sleep(0.3)
    async with httpx.AsyncClient() as http:
        refused = await http.post(
            oidc_server.agui_url, json={}, headers={"Authorization": f"Bearer {before}"}
        )
    assert refused.status_code == 401
    assert "a key the issuer does not publish" in refused.json()["error"]
    keys.max_age = 600.0
    idp.rotate([old, new])  # as the module's other tests expect


async def test_the_card_says_how_to_get_in(oidc_server: BridgeServer, idp: OidcPeer) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.get(oidc_server.card_url)
        legacy = (await http.get(oidc_server.card_url, headers={"A2A-Version": "0.3"})).json()
    assert response.status_code == 200  # the card itself needs no credentials
    card = response.json()
    discovery = f"{idp.issuer}/.well-known/openid-configuration"
    # The default card is a2a-sdk's merged form: each scheme in its 1.0 shape and with the
    # 0.3 fields beside it, so readers of either version find theirs.
    assert card["securitySchemes"]["oidc"]["openIdConnectSecurityScheme"] == {
        "openIdConnectUrl": discovery,
        "description": "Access tokens of this OpenID provider (client credentials)",
    }
    assert card["securitySchemes"]["oidc"]["type"] == "openIdConnect"
    assert card["securitySchemes"]["oidc"]["openIdConnectUrl"] == discovery
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert card["securityRequirements"] == [{"schemes": {"oidc": {}}}, {"schemes": {"bearer": {}}}]
    assert legacy["security"] == [{"oidc": []}, {"bearer": []}]
    assert legacy["securitySchemes"]["oidc"]["type"] == "openIdConnect"
