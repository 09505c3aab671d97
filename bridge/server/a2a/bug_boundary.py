"""The line between a client's mistake and the server's own bug, on the A2A door.

a2a-sdk answers an exception that is not an ``A2AError`` by quoting it: JSON-RPC
``-32603`` with ``str(exc)`` as the message (``list index out of range``). Every method
of the bridge's request handler runs inside :func:`bug_boundary`: an ``A2AError`` (the
answer the handler chose) passes as it is; anything else is logged here with its
traceback and answered ``InternalError`` "internal server error" on every transport
(JSON-RPC ``-32603``, REST 500, gRPC ``INTERNAL``), never with Python's text.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any, TypeVar, cast

from a2a.utils.errors import A2AError, InternalError

logger = logging.getLogger(__name__)

#: What a client is told about the server's own bug.
INTERNAL_ERROR = "internal server error"

F = TypeVar("F", bound=Callable[..., Any])


def _internal(method: str, exc: Exception) -> InternalError:
    logger.error("%s failed", method, exc_info=exc)
    return InternalError(message=INTERNAL_ERROR)


def bug_boundary(method: F) -> F:
    """``method`` (a coroutine function or an async generator function) with every
    exception that is not an ``A2AError`` turned into ``InternalError`` (see the module
    doc)."""
    name = method.__qualname__
    if inspect.isasyncgenfunction(method):

        @functools.wraps(method)
        async def stream(*args: Any, **kwargs: Any) -> AsyncGenerator[Any]:
            try:
                # Closed with the caller's stream: the handler's cleanup runs at once.
                async with contextlib.aclosing(method(*args, **kwargs)) as items:
                    async for item in items:
                        yield item
            except A2AError:
                raise
            except Exception as exc:
                raise _internal(name, exc) from exc

        return cast("F", stream)

    @functools.wraps(method)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except A2AError:
            raise
        except Exception as exc:
            raise _internal(name, exc) from exc

    return cast("F", call)
