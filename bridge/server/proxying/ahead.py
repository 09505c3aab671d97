"""A proxied run's upstream request, sent before the run's first step.

A run the proxy relays (:mod:`.relay`, :mod:`.unary_relay`) sends its agent one request,
and on the way to it the runner sets the run up: the producer task and its first turn
of the event loop, the run's metrics and redaction, the remote agent's decoder and
reader. About 210 µs of a proxied tool request went there with the upstream still
unasked (``bench/README.md``). So the runner sends that request as soon as the task is
accepted (:meth:`~trpc_bridge.server.runner.AgentRunner.start`), and the run reads its
answer when it gets there (:meth:`AheadSource.ahead`, the passthrough's ``ahead``).

Only where nothing changes but the time: the same request, with the caller's trace
context forwarded (tracing off: no span of the run is in it, none starts before it),
written without an await on a kept-alive connection; with tracing on, a credential to
fetch, or no connection to reuse, the run sends it itself, as before
(:meth:`~trpc_bridge.client.RemoteAgent.send_ahead`). With metrics on, the run's meters
(the served run's and the remote call's) start when the request was sent
(:attr:`AheadSource.sent_at`), as they start right before it is sent otherwise. A run
that ends before it reads the answer (cancelled first) closes that connection: the
upstream sees its caller go, as when any run in progress is cancelled.
"""

from __future__ import annotations

from typing import ClassVar

from trpc_bridge.client.passthrough import Ahead
from trpc_bridge.client.remote_agent import RemoteAgent
from trpc_bridge.events import AgentRequest


class AheadSource:
    """A relay whose run's request the runner may send ahead (see the module doc)."""

    #: The run streams (``message/stream``); else ``message/send``.
    streams: ClassVar[bool] = True
    _agent: RemoteAgent
    _ahead: Ahead | None = None
    #: When the run's request was sent ahead (``time.perf_counter``); None: it was not.
    sent_at: float | None = None

    def send_ahead(self, request: AgentRequest) -> bool:
        """Send the run's request for ``request`` now when it can be; True when it was."""
        self._ahead = self._agent.send_ahead(request, stream=self.streams)
        if self._ahead is None:
            return False
        self.sent_at = self._ahead.sent.at
        return True

    def ahead(self) -> Ahead | None:
        """The request sent ahead, handed over once (the passthrough's ``ahead``)."""
        ahead, self._ahead = self._ahead, None
        return ahead

    def drop_ahead(self) -> None:
        """The run is over: a request it never read the answer to is given up."""
        ahead = self.ahead()
        if ahead is not None:
            ahead.sent.abort()
