"""The playground's routes next to everything else on the HTTP port: the page takes only
``GET /`` (JSON-RPC keeps ``POST /``), the card and REST are untouched, a base path moves
it all, ``--no-playground`` removes it (that the files ship in the wheel:
``tests/test_packaging.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from peers import bridge_server
from server.helpers import go_message, jsonrpc

from trpc_bridge.agents.demo import demo_agent
from trpc_bridge.server import BridgeServer, ServerOptions

ROOT = Path(__file__).resolve().parents[2]
JSONRPC_SEND = jsonrpc("message/send", {"message": go_message("weather in Paris")})


def client(options: ServerOptions) -> httpx.AsyncClient:
    app = BridgeServer(demo_agent(), options).starlette_app()
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bridge")


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with client(ServerOptions()) as c:
        yield c


async def test_page_and_assets_are_served_with_a_same_origin_policy(
    http: httpx.AsyncClient,
) -> None:
    page = await http.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert '<script src="playground/app.js" defer></script>' in page.text
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    for path, media_type in [
        ("/playground/app.js", "text/javascript"),
        ("/playground/app.css", "text/css"),
    ]:
        asset = await http.get(path)
        assert asset.status_code == 200
        assert asset.headers["content-type"].startswith(media_type)
    assert (await http.head("/")).status_code == 200
    assert (await http.get("/playground/other.js")).status_code == 404


async def test_json_rpc_card_and_rest_are_unchanged(http: httpx.AsyncClient) -> None:
    rpc = await http.post("/", json=JSONRPC_SEND)
    assert rpc.status_code == 200
    assert "It is 14°C in Paris." in rpc.text
    card = await http.get("/.well-known/agent-card.json")
    assert card.json()["name"] == "weather-agent"
    rest = await http.post(
        "/message:send",
        json={
            "message": {
                "messageId": "m2",
                "role": "ROLE_USER",
                "parts": [{"text": "weather in Paris"}],
            }
        },
        headers={"A2A-Version": "1.0"},
    )
    assert rest.status_code == 200, rest.text
    assert "It is 14°C in Paris." in rest.text
    # Other methods on / are still JSON-RPC's answer.
    assert (await http.put("/", content=b"{}")).status_code == 405


async def test_base_path_moves_the_page_next_to_its_agui_endpoint() -> None:
    async with client(ServerOptions(base_path="/agents/weather")) as http:
        redirect = await http.get("/agents/weather")
        assert redirect.status_code == 307
        assert redirect.headers["location"] == "/agents/weather/"
        assert (await http.get("/agents/weather/")).status_code == 200
        assert (await http.get("/agents/weather/playground/app.js")).status_code == 200
        assert (await http.post("/agents/weather", json=JSONRPC_SEND)).status_code == 200
        assert (await http.post("/agents/weather/", json=JSONRPC_SEND)).status_code == 200
        assert (await http.get("/")).status_code == 404


async def test_no_playground_leaves_get_root_as_before() -> None:
    async with client(ServerOptions(playground=False)) as http:
        assert (await http.get("/")).status_code == 405
        assert (await http.get("/playground/app.js")).status_code == 404
        assert (await http.post("/", json=JSONRPC_SEND)).status_code == 200


def test_describe_lists_the_page() -> None:
    lines = BridgeServer(demo_agent(), ServerOptions(port=8080)).describe()
    assert lines[1] == "web page  http://127.0.0.1:8080/  (the playground: open it in a browser)"
    no_page = BridgeServer(demo_agent(), ServerOptions(port=8080, playground=False)).describe()
    assert not any(line.startswith("web page") for line in no_page)


def test_cli_flag_turns_the_page_off() -> None:
    with bridge_server("demo") as on, bridge_server("demo", extra=["--no-playground"]) as off:
        assert httpx.get(on.url, timeout=10).status_code == 200
        assert httpx.get(off.url, timeout=10).status_code == 405
