"""What a unary call's door does once the answer has left: storing the call's task.

A ``message/send`` run ends by storing its task and forgetting the live one
(:meth:`~trpc_bridge.server.tasks.registry.TaskRegistry.retire`). With the store in this
process (``TaskRegistry.stores_after_end``, where a save cannot fail) the caller need not
wait for that: the JSON-RPC 0.3 door gives the handler an :class:`AfterAnswer` in the
call's context, the handler leaves the retiring there, and the door's response runs it
once its bytes are written (:class:`AnsweredResponse`; the exchange sends a complete
response at once, ``server/http/exchange.py``), in the same turn of the event loop: no
request can be read in between, and until it runs the task is still the live one, which
every read finds. The answer's protobuf is built there too, for the store
(``codecs/a2a/packed.py``): together 9-10 % of a served unary call's time
(``bench/README.md``). A door without one (REST, gRPC) or a database store retires
before answering, as a save that fails must fail the call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from a2a.server.context import ServerCallContext
from starlette.responses import Response

#: Where the door keeps a call's :class:`AfterAnswer` (a key of the bridge's own).
_AFTER_ANSWER = "trpc_bridge.after_answer"


class AfterAnswer:
    """Steps to run once a call's answer has left, in the order they were left."""

    def __init__(self) -> None:
        self._steps: list[Callable[[], Awaitable[None]]] = []

    def leave(self, step: Callable[[], Awaitable[None]]) -> None:
        self._steps.append(step)

    async def run(self) -> None:
        """Every step left, each once."""
        steps, self._steps = self._steps, []
        for step in steps:
            await step()

    def attach(self, context: ServerCallContext) -> None:
        context.state[_AFTER_ANSWER] = self


def after_answer(context: ServerCallContext) -> AfterAnswer | None:
    """The :class:`AfterAnswer` of ``context``'s door; None: the door has none."""
    found = context.state.get(_AFTER_ANSWER)
    return found if isinstance(found, AfterAnswer) else None


class AnsweredResponse(Response):
    """A JSON answer whose ``after`` steps run once it is sent: also when sending it
    fails or is cancelled (the task is stored however the caller went)."""

    def __init__(self, content: bytes, after: AfterAnswer) -> None:
        super().__init__(content, media_type="application/json")
        self._after = after

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._after.run()
