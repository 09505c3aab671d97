"""``GET <base>/.well-known/jwks.json``: the public half of every key the bridge signs
with (RFC 7517 JWK Set), for webhook receivers checking push-notification JWTs and
callers checking the card's signature (its ``jku``).

The set is built per request from the key rings, so a rotation shows at once; answers
may be cached for :data:`JWKS_MAX_AGE` seconds (a receiver meeting an unknown ``kid``
fetches the set again, as PyJWT's ``PyJWKClient`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from trpc_bridge.server.signing.keys import SigningKey

JWKS_PATH = "/.well-known/jwks.json"
#: Short: a cached set must not outlive the next rotation by much.
JWKS_MAX_AGE = 60

KeySource = Callable[[], Iterable[SigningKey]]


def jwks(sources: Sequence[KeySource]) -> dict[str, list[dict[str, object]]]:
    """The JWK Set of every key the sources publish, each ``kid`` once."""
    keys = {key.kid: key for source in sources for key in source()}
    return {"keys": [key.public() for key in keys.values()]}


def jwks_routes(sources: Sequence[KeySource], *, base_path: str = "") -> list[BaseRoute]:
    async def serve(request: Request) -> Response:
        return JSONResponse(
            jwks(sources), headers={"Cache-Control": f"public, max-age={JWKS_MAX_AGE}"}
        )

    return [Route(f"{base_path}{JWKS_PATH}", serve, methods=["GET"])]
