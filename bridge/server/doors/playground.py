"""The playground: a chat page at ``GET /`` that watches the served agent through the same
server's AG-UI endpoint (``POST /agui``): reasoning, tool calls and results, code and its
output, state changes, the streaming answer, errors and the run's trace id.

The page is three static files shipped in the package (``static/playground.*``): plain
JavaScript, nothing fetched from elsewhere. Only ``GET`` (and ``HEAD``) of the root is
taken, so JSON-RPC keeps ``POST /``. Every URL the page uses is relative to the page, so
under a base path the page is served at ``<base>/`` (``<base>`` redirects there).

The Content-Security-Policy lets the page talk to its own origin only: even a reply
that smuggled markup into the page (the script inserts agent output as text, never as
HTML; answers are Markdown turned into DOM nodes by ``markdown.js``) could not load or
send anything elsewhere. Under each finished run the page draws the run's spans
(``waterfall.js``) from the server's span buffer (``server/ops/trace_view.py``).

Behind authentication the page and its assets stay public (static files, no data), and
its calls (``/agui``, the trace view) carry the credential the card asks for
(``securitySchemes``: an API key in a header, or a bearer token), which the user pastes
into the page. The page keeps it in the password field only: never in ``localStorage``,
a cookie or a URL, so it is gone with the tab. Without one, a refused run says
"Authentication required" and what to paste.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib.resources import files

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

#: Asset name → (file in ``static/``, media type).
_ASSETS = {
    "app.js": ("playground.js", "text/javascript; charset=utf-8"),
    "markdown.js": ("markdown.js", "text/javascript; charset=utf-8"),
    "waterfall.js": ("waterfall.js", "text/javascript; charset=utf-8"),
    "app.css": ("playground.css", "text/css; charset=utf-8"),
}
_PAGE = ("playground.html", "text/html; charset=utf-8")

_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # Revalidate on every load, so a new version of the bridge is never served stale.
    "Cache-Control": "no-cache",
}


def _read(name: str) -> bytes:
    return (files("trpc_bridge.server.doors.static") / name).read_bytes()


def _static(name: str, media_type: str) -> Callable[[Request], Awaitable[Response]]:
    body = _read(name)  # read once: the files are small and never change while serving

    async def serve(_: Request) -> Response:
        return Response(body, media_type=media_type, headers=_HEADERS)

    return serve


def playground_paths(base_path: str = "") -> list[str]:
    """The paths of the page and its assets: static, served without credentials (the
    page's calls to ``/agui`` carry them)."""
    base = base_path.rstrip("/")
    paths = [f"{base}/", *(f"{base}/playground/{asset}" for asset in _ASSETS)]
    return [*paths, base] if base else paths


def playground_routes(base_path: str = "") -> list[BaseRoute]:
    """The page at ``<base_path>/`` and its two assets (GET and HEAD only)."""
    base = base_path.rstrip("/")
    routes: list[BaseRoute] = [Route(f"{base}/", _static(*_PAGE), methods=["GET"])]
    if base:

        async def to_page(_: Request) -> Response:
            return RedirectResponse(f"{base}/")

        routes.append(Route(base, to_page, methods=["GET"]))
    for asset, (name, media_type) in _ASSETS.items():
        endpoint = _static(name, media_type)
        routes.append(Route(f"{base}/playground/{asset}", endpoint, methods=["GET"]))
    return routes
