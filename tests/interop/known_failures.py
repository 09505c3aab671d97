"""Matrix cells that fail today, each with the reason (issue [8]); they run as
``xfail(strict=True)``, so a fix that makes one pass fails the run until it is taken out
of this table. Measured with trpc-agent-py 1.2.0 and google-adk 2.13.0 (docs/interop.md).
"""

from __future__ import annotations

_TRPC_PY_CLIENT = (
    "trpc-agent-py reads a missing `partial` key as partial: the bridge's final text is one "
    "more chunk, shown twice and not kept in the caller's session (observation 1)"
)
_ADK_CARD = (
    "ADK's client refuses the card: its gRPC interface url is not on the card's origin "
    "(observation 2)"
)
_TRPC_PY_SERVER = (
    "the decoder takes trpc-agent-py's partial:false last-chunk artifact for one more delta "
    "and shows the caller's own message from the submitted status (observation 3)"
)
_ADK_SERVER = (
    "the decoder ignores ADK's ids (adk_custom_metadata, adk_event_id) and shows the "
    "full-text status message and the final artifact again (observation 4)"
)
_PROXY_TO_TRPC_PY = f"through the proxy: {_TRPC_PY_SERVER}"
_PROXY_TO_ADK = f"through the proxy: {_ADK_SERVER}"

#: column → reason: every scenario of the column fails, except those in PASSING.
BY_COLUMN: dict[str, str] = {
    "trpc-py→py stream v0": _TRPC_PY_CLIENT,
    "trpc-py-v1→py stream v1": _TRPC_PY_CLIENT,
    "adk→py stream v1": _ADK_CARD,
    "adk→py unary v1": _ADK_CARD,
    "py→trpc-py stream v0": _TRPC_PY_SERVER,
    "py→trpc-py unary v0": _TRPC_PY_SERVER,
    "py→trpc-py-v1 stream v1": _TRPC_PY_SERVER,
    "py→trpc-py-v1 unary v1": _TRPC_PY_SERVER,
    "py→adk stream v1": _ADK_SERVER,
    "py→adk unary v1": _ADK_SERVER,
    "trpc-py→proxy→adk stream": f"{_TRPC_PY_CLIENT}; {_PROXY_TO_ADK} (observation 5)",
    "trpc-py→proxy→go stream": _TRPC_PY_CLIENT,
    "adk→proxy→trpc-py stream": _ADK_CARD,
    "adk→proxy→trpc-py unary": _ADK_CARD,
    "adk→proxy→trpc-py-v1 stream": _ADK_CARD,
    "adk→proxy→trpc-py-v1 unary": _ADK_CARD,
    "adk→proxy→go stream": _ADK_CARD,
    "adk→proxy→go unary": _ADK_CARD,
    "go→proxy→trpc-py stream": _PROXY_TO_TRPC_PY,
    "go→proxy→trpc-py unary": _PROXY_TO_TRPC_PY,
    "go→proxy→trpc-py-v1 stream": _PROXY_TO_TRPC_PY,
    "go→proxy→trpc-py-v1 unary": _PROXY_TO_TRPC_PY,
    "go→proxy→adk stream": _PROXY_TO_ADK,
    "go→proxy→adk unary": _PROXY_TO_ADK,
}

#: (column, scenario) cells of a failing column that pass already.
PASSING = {
    ("py→trpc-py-v1 stream v1", "error"),
    ("go→proxy→trpc-py-v1 unary", "error"),
    ("go→proxy→adk unary", "error"),
}


def known_failure(column: str, scenario: str) -> str | None:
    if (column, scenario) in PASSING:
        return None
    return BY_COLUMN.get(column)
