"""The cost of authentication: unary requests/s of the bridge with OIDC bearer-token
verification on (``--auth oidc``, keys cached) against the same bridge with it off (the
loopback default, ``X-User-ID`` on trust), measured in the same run (target: on ≥ 0.95×
off).

The identity provider is a discovery document and a JWKS served on loopback from this
process (the verifier fetches them once, then keeps the key). Each request carries the
same RS256 token, as a client reusing its access token does (the verifier remembers a
verified token until it expires); a third configuration sends a new token with every
request, each paying the signature check. The bridge answers a 0.3 ``message/send`` with
one ``Message`` (uvicorn, sequential raw httpx calls). One server at a time, started
afresh for each measurement, the configurations taking turns to go first: two bridges in
one process do not run at the same speed even when configured alike (the one started
later was ~10 % slower). Wall-clock rates swing with the machine's load; the rate per
second of CPU time (client and server share the process) is steadier.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).parent))
from _loopback import message_body
from server_unary import ANSWER, bridge_answer

from trpc_bridge.agent import FunctionAgent
from trpc_bridge.server import BridgeServer, ServerOptions
from trpc_bridge.server.auth.options import SecurityOptions
from trpc_bridge.server.http.listener import HttpListener

WARMUP, CALLS, ROUNDS = 50, 400, 6
AUDIENCE = "https://bridge.bench/agent"


def provider(issuer: str, jwk: dict[str, Any]) -> Starlette:
    async def discovery(_: Request) -> JSONResponse:
        return JSONResponse({"issuer": issuer, "jwks_uri": f"{issuer}/jwks"})

    async def jwks(_: Request) -> JSONResponse:
        return JSONResponse({"keys": [jwk]})

    return Starlette(
        routes=[
            Route("/.well-known/openid-configuration", discovery),
            Route("/jwks", jwks),
        ]
    )


async def rate(
    http: httpx.AsyncClient, url: str, headers: Callable[[int], dict[str, str]]
) -> tuple[float, float]:
    """Requests per second of wall time, and per second of this process's CPU time (the
    client's share is the same for both configurations)."""
    for i in range(WARMUP):
        response = await http.post(
            url, json=message_body("message/send", "hi", i), headers=headers(i)
        )
        response.raise_for_status()
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(CALLS):
        response = await http.post(
            url, json=message_body("message/send", "hi", i), headers=headers(i)
        )
        assert response.json()["result"]["parts"][0]["text"] == ANSWER
    return CALLS / (time.perf_counter() - start), CALLS / (time.process_time() - cpu)


async def main() -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = {**RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "bench", "alg": "RS256"}
    idp = HttpListener()
    issuer = idp.url
    await idp.start(provider(issuer, jwk), log_level="error")
    now = int(time.time())
    claims = {"iss": issuer, "sub": "alice", "aud": AUDIENCE, "iat": now, "exp": now + 3600}
    token = jwt.encode(claims, key, "RS256", headers={"kid": "bench"})
    # One token per request (another jti each): every request pays the signature check.
    fresh = [
        jwt.encode({**claims, "jti": str(i)}, key, "RS256", headers={"kid": "bench"})
        for i in range(WARMUP + CALLS)
    ]
    agent = FunctionAgent(name="bench", description="one answer", fn=bridge_answer)
    oidc = SecurityOptions(auth="oidc", oidc_issuer=issuer, audience=AUDIENCE)
    configs: dict[str, tuple[SecurityOptions, Callable[[int], dict[str, str]]]] = {
        "off": (SecurityOptions(), lambda i: {"X-User-ID": "alice"}),
        "on": (oidc, lambda i: {"Authorization": f"Bearer {token}"}),
        "new": (oidc, lambda i: {"Authorization": f"Bearer {fresh[i]}"}),
    }
    rates: dict[str, list[tuple[float, float]]] = {name: [] for name in configs}
    fetches = 0
    try:
        async with httpx.AsyncClient(timeout=None) as http:
            for round_ in range(ROUNDS):
                names = list(configs)
                for name in names[round_ % 3 :] + names[: round_ % 3]:
                    security, headers = configs[name]
                    options = ServerOptions(grpc_port=None, security=security)
                    async with BridgeServer(agent, options) as server:
                        rates[name].append(await rate(http, server.jsonrpc_url, headers))
                        if name == "on":
                            fetches += server.gate.authenticator.keys.fetches  # type: ignore[attr-defined]
    finally:
        await idp.stop()
    wall = {name: max(r[0] for r in found) for name, found in rates.items()}
    cpu = {name: max(r[1] for r in found) for name, found in rates.items()}
    best = f"best of {ROUNDS} servers x {CALLS}"
    labels = {
        "off": "auth off (X-User-ID)             ",
        "on": "auth on  (OIDC RS256, its token) ",
        "new": "auth on  (a new token per request)",
    }
    for name, label in labels.items():
        print(
            f"{label} message/send: {wall[name]:6.0f} req/s wall, "
            f"{cpu[name]:6.0f} req/CPU-s ({best})"
        )
    print(
        f"OIDC verification: {wall['on'] / wall['off']:.3f}x of off by wall time, "
        f"{cpu['on'] / cpu['off']:.3f}x by CPU time (target >= 0.95x); a new token per "
        f"request {wall['new'] / wall['off']:.3f}x / {cpu['new'] / cpu['off']:.3f}x; "
        f"JWKS fetched {fetches} time(s) in {ROUNDS} servers"
    )


if __name__ == "__main__":
    asyncio.run(main())
