"""Push notifications: task updates POSTed to the caller's webhooks.

Every frame of a task that has push configs (``StreamResponse`` JSON, as A2A 1.0 §4.3
specifies) is queued for that task and delivered in order by one worker per task, to
every config registered for it, with:

- ``Authorization: <scheme> <credentials>`` from the config's ``authentication`` and
  ``X-A2A-Notification-Token`` from its ``token``, so the receiver can tell it is us;
- ``X-A2A-Notification-Id: <task id>:<sequence>``, the same on every retry of the same
  update: delivery is at least once, and the receiver dedupes on that id;
- a JWT signed by the bridge over the exact body bytes (``X-A2A-Notification-JWT``, and
  ``Authorization: Bearer`` when the config has no authentication of its own), checked
  against the bridge's JWKS (:mod:`~trpc_bridge.server.push.signing`), signed anew for
  each attempt;
- retries with exponential backoff on connection errors and 5xx / 429 answers (a 4xx
  is final: the receiver refused that update);
- the URL screen of :class:`~trpc_bridge.server.push.policy.WebhookScreen` before each
  attempt (no SSRF); a config it refuses (its host now resolves inward) is logged once,
  not once per update, and gets nothing.

Configs live in a2a-sdk's ``PushNotificationConfigStore`` (in memory here; its database
store is the same interface for several replicas), scoped to the caller who created them.
A task is watched (:meth:`PushDelivery.watch`) once it has a config, so tasks without push
cost one set lookup per frame.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from dataclasses import dataclass

import httpx
from a2a.server.tasks import PushNotificationConfigStore
from a2a.types import TaskPushNotificationConfig, TaskStatusUpdateEvent
from a2a.utils.proto_utils import to_stream_response
from google.protobuf.json_format import MessageToDict

from trpc_bridge.codecs.encoding import StreamFrame, as_proto
from trpc_bridge.server.options import PushPolicy
from trpc_bridge.server.push.policy import WebhookScreen
from trpc_bridge.server.push.signing import JWT_HEADER, PushSigner
from trpc_bridge.server.tasks.states import TERMINAL_STATES
from trpc_bridge.telemetry.metrics import (
    PUSH_DELIVERED,
    PUSH_FAILED,
    PUSH_REFUSED,
    BridgeMetrics,
)

logger = logging.getLogger(__name__)

NOTIFICATION_ID_HEADER = "X-A2A-Notification-Id"
TOKEN_HEADER = "X-A2A-Notification-Token"


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    first_delay: float = 0.2
    max_delay: float = 5.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        return float(min(self.max_delay, self.first_delay * 2 ** (attempt - 1)))


def _retryable(response: httpx.Response) -> bool:
    return response.status_code >= 500 or response.status_code == 429


class PushDelivery:
    def __init__(
        self,
        store: PushNotificationConfigStore,
        policy: PushPolicy,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = 10.0,
        signer: PushSigner | None = None,
    ) -> None:
        self.store = store
        self.policy = WebhookScreen(policy)
        self.signer = signer
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        self._watched: set[str] = set()
        self._queues: dict[str, deque[tuple[str, bytes]]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        self._sequence: dict[str, int] = {}
        self._ended: set[str] = set()
        #: (task id, config id) of the configs whose refusal was logged.
        self._refused: set[tuple[str, str]] = set()
        #: Counts each delivery's outcome (set by the server when metrics are on).
        self.metrics: BridgeMetrics | None = None

    def _outcome(self, delivered: bool, outcome: str) -> bool:
        if self.metrics is not None:
            self.metrics.push_delivery(outcome)
        return delivered

    def watch(self, task_id: str) -> None:
        self._watched.add(task_id)

    def observe(self, task_id: str, frame: StreamFrame) -> None:
        """Queue ``frame`` of ``task_id`` for its webhooks (a no-op without configs)."""
        if task_id not in self._watched:
            return
        sequence = self._sequence.get(task_id, 0) + 1
        self._sequence[task_id] = sequence
        payload = MessageToDict(to_stream_response(as_proto(frame)))
        # Serialised once: the JWT hashes these very bytes, and every webhook gets them.
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
        self._queues.setdefault(task_id, deque()).append((f"{task_id}:{sequence}", body))
        if isinstance(frame, TaskStatusUpdateEvent) and frame.status.state in TERMINAL_STATES:
            self._ended.add(task_id)  # forgotten once its last update is out
        if task_id not in self._workers:
            self._workers[task_id] = asyncio.create_task(self._drain(task_id))

    async def _drain(self, task_id: str) -> None:
        queue = self._queues[task_id]
        try:
            while queue:
                notification_id, body = queue.popleft()
                configs = await self.store.get_info_for_dispatch(task_id)
                await asyncio.gather(
                    *(self._deliver(c, task_id, notification_id, body) for c in configs)
                )
        finally:
            del self._workers[task_id]
            if not queue:
                del self._queues[task_id]
                if task_id in self._ended:
                    for kept in (self._ended, self._watched):
                        kept.discard(task_id)
                    self._sequence.pop(task_id, None)
                    self._refused = {r for r in self._refused if r[0] != task_id}

    async def _deliver(
        self, config: TaskPushNotificationConfig, task_id: str, notification_id: str, body: bytes
    ) -> bool:
        headers = {NOTIFICATION_ID_HEADER: notification_id, "Content-Type": "application/json"}
        if config.token:
            headers[TOKEN_HEADER] = config.token
        auth = config.authentication
        own_authorization = config.HasField("authentication") and auth.scheme and auth.credentials
        if own_authorization:
            headers["Authorization"] = f"{auth.scheme} {auth.credentials}"
        for attempt in range(1, self.retry.attempts + 1):
            refused = await self.policy.screen(config.url)
            if refused is not None:
                self._log_refusal(notification_id, config, refused)
                return self._outcome(False, PUSH_REFUSED)
            if self.signer is not None:
                token = self.signer.token(url=config.url, task_id=task_id, body=body)
                headers[JWT_HEADER] = token
                if not own_authorization:
                    headers["Authorization"] = f"Bearer {token}"
            try:
                response = await self._http.post(config.url, content=body, headers=headers)
            except httpx.HTTPError as exc:
                outcome = f"{type(exc).__name__}"
            else:
                if not _retryable(response):
                    if response.is_error:
                        logger.warning(
                            "push %s refused by %s: %s",
                            notification_id,
                            config.url,
                            response.status_code,
                        )
                    if response.is_error:
                        return self._outcome(False, PUSH_REFUSED)
                    return self._outcome(True, PUSH_DELIVERED)
                outcome = f"HTTP {response.status_code}"
            if attempt < self.retry.attempts:
                await asyncio.sleep(self.retry.delay(attempt))
        logger.warning(
            "push %s to %s failed after %d attempts (%s)",
            notification_id,
            config.url,
            self.retry.attempts,
            outcome,
        )
        return self._outcome(False, PUSH_FAILED)

    def _log_refusal(
        self, notification_id: str, config: TaskPushNotificationConfig, reason: str
    ) -> None:
        task_id = notification_id.rsplit(":", 1)[0]
        key = (task_id, config.id or config.url)
        if key not in self._refused:
            self._refused.add(key)
            logger.warning(
                "push for task %s refused, config %s gets no updates: %s",
                task_id,
                config.id,
                reason,
            )

    async def flush(self) -> None:
        """Until every queued update has been delivered or given up (tests, shutdown)."""
        while self._workers:
            await asyncio.gather(*list(self._workers.values()), return_exceptions=True)

    async def close(self) -> None:
        for worker in list(self._workers.values()):
            worker.cancel()
        await asyncio.gather(*list(self._workers.values()), return_exceptions=True)
        await self._http.aclose()
