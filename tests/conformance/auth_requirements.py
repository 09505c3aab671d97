"""The TCK's authentication requirements that its own tests leave unchecked, checked
against a bridge whose card declares a scheme (``tck_run.py --target tck-auth``), one
record per requirement and transport, in the TCK's outcome format:

- ``AUTH-SERVER-002`` (MUST, A2A §7.4): every operation without a credential, or with a
  wrong one, is refused (HTTP 401 with ``WWW-Authenticate``, gRPC ``UNAUTHENTICATED``);
- ``AUTH-SCOPE-001`` (MUST, §13.1): every task operation checks who asks: another user's
  task cannot be read, cancelled, subscribed to, or given push configs;
- ``AUTH-SCOPE-002`` (MUST, §13.1): ``ListTasks`` returns only the caller's tasks;
- ``AUTH-SCOPE-003`` (MUST, §3.3.2): another user's task is answered exactly as a task
  that does not exist.

The card must declare the scheme in ``securitySchemes`` and ``securityRequirements``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import httpx
from a2a.types import a2a_pb2, a2a_pb2_grpc

HEADER = "X-API-Key"
V1 = {"A2A-Version": "1.0"}
Check = Callable[[], str]  # empty: passed; else why not


def _message(text: str = "tck-complete-task") -> dict[str, Any]:
    return {
        "messageId": f"{text}-{uuid.uuid4().hex[:8]}",
        "role": "ROLE_USER",
        "parts": [{"text": "hi"}],
    }


class Probe:
    """One bridge, its interfaces, and the keys of two users."""

    def __init__(self, base_url: str, key: str, other_key: str) -> None:
        self.base = base_url.rstrip("/")
        self.key, self.other_key = key, other_key
        card = httpx.get(f"{self.base}/.well-known/agent-card.json").json()
        self.card = card
        urls = {i["protocolBinding"]: i["url"] for i in reversed(card["supportedInterfaces"])}
        self.jsonrpc, self.rest, self.grpc = (
            urls["JSONRPC"],
            urls["HTTP+JSON"],
            urls.get("GRPC", ""),
        )
        self.http = httpx.Client(timeout=30)

    # --- one operation per transport; the answer as (ok, status, payload) ---------------

    def jsonrpc_call(
        self, method: str, params: dict[str, Any], key: str | None
    ) -> tuple[int, dict[str, Any], str]:
        headers = {**V1, **({HEADER: key} if key else {})}
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = self.http.post(self.jsonrpc, json=body, headers=headers)
        text = response.text
        if text.startswith("data:"):  # a stream: its first frame
            text = text.splitlines()[0].removeprefix("data:")
        return response.status_code, json.loads(text), response.headers.get("www-authenticate", "")

    def rest_call(
        self, verb: str, path: str, body: dict[str, Any] | None, key: str | None
    ) -> tuple[int, str]:
        headers = {**V1, **({HEADER: key} if key else {})}
        response = self.http.request(verb, f"{self.rest}{path}", json=body, headers=headers)
        return response.status_code, response.headers.get("www-authenticate", "")

    def grpc_call(self, method: str, request: Any, key: str | None) -> grpc.StatusCode:
        metadata = [("a2a-version", "1.0")] + ([(HEADER.lower(), key)] if key else [])
        with grpc.insecure_channel(self.grpc) as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
            try:
                answer = getattr(stub, method)(request, metadata=metadata, timeout=30)
                if method == "SubscribeToTask":
                    next(iter(answer))
            except grpc.RpcError as exc:
                return exc.code()
        return grpc.StatusCode.OK

    def task_of(self, key: str) -> str:
        _, answer, _ = self.jsonrpc_call(
            "SendMessage", {"message": _message("tck-input-required")}, key
        )
        return str(answer["result"]["task"]["id"])


# --- the requirements -------------------------------------------------------------------


def _server_002(probe: Probe, transport: str) -> str:
    task = probe.task_of(probe.key)
    wrong = "not-a-key-of-this-server"
    failures: list[str] = []
    for key in (None, wrong):
        if transport == "jsonrpc":
            calls: dict[str, dict[str, Any]] = {
                "SendMessage": {"message": _message()},
                "SendStreamingMessage": {"message": _message()},
                "GetTask": {"id": task},
                "ListTasks": {},
                "CancelTask": {"id": task},
                "SubscribeToTask": {"id": task},
                "CreateTaskPushNotificationConfig": {
                    "taskId": task,
                    "url": "https://example.com/hook",
                },
                "GetTaskPushNotificationConfig": {"taskId": task, "id": "x"},
                "ListTaskPushNotificationConfigs": {"taskId": task},
                "DeleteTaskPushNotificationConfig": {"taskId": task, "id": "x"},
                "GetExtendedAgentCard": {},
                "message/send": {
                    "message": {
                        "messageId": "m",
                        "role": "user",
                        "parts": [{"kind": "text", "text": "hi"}],
                    }
                },
            }
            for method, params in calls.items():
                status, answer, challenge = probe.jsonrpc_call(method, params, key)
                if status != 401 or not challenge or "error" not in answer:
                    failures.append(
                        f"{method} ({'no' if key is None else 'a wrong'} key): HTTP {status}"
                    )
        elif transport == "http_json":
            calls_rest = [
                ("POST", "/message:send", {"message": _message()}),
                ("POST", "/message:stream", {"message": _message()}),
                ("GET", f"/tasks/{task}", None),
                ("GET", "/tasks", None),
                ("POST", f"/tasks/{task}:cancel", {}),
                ("GET", f"/tasks/{task}:subscribe", None),
                ("GET", f"/tasks/{task}/pushNotificationConfigs", None),
                ("GET", "/extendedAgentCard", None),
            ]
            for verb, path, body in calls_rest:
                status, challenge = probe.rest_call(verb, path, body, key)
                if status != 401 or not challenge:
                    failures.append(f"{verb} {path}: HTTP {status}")
        else:
            send = a2a_pb2.SendMessageRequest()
            send.message.message_id = "m-auth"
            send.message.parts.add().text = "hi"
            calls_grpc: dict[str, Any] = {
                "SendMessage": send,
                "GetTask": a2a_pb2.GetTaskRequest(id=task),
                "ListTasks": a2a_pb2.ListTasksRequest(),
                "CancelTask": a2a_pb2.CancelTaskRequest(id=task),
                "SubscribeToTask": a2a_pb2.SubscribeToTaskRequest(id=task),
                "GetExtendedAgentCard": a2a_pb2.GetExtendedAgentCardRequest(),
            }
            for method, request in calls_grpc.items():
                code = probe.grpc_call(method, request, key)
                if code != grpc.StatusCode.UNAUTHENTICATED:
                    failures.append(f"{method}: {code.name}")
    return "; ".join(failures)


def _not_found(probe: Probe, transport: str, task: str, key: str) -> dict[str, Any]:
    """How ``key``'s user is answered for ``task``, per operation (ids masked)."""
    found: dict[str, Any] = {}
    if transport == "jsonrpc":
        for method, params in {
            "GetTask": {"id": task},
            "CancelTask": {"id": task},
            "SubscribeToTask": {"id": task},
            "ListTaskPushNotificationConfigs": {"taskId": task},
            "CreateTaskPushNotificationConfig": {"taskId": task, "url": "https://example.com/hook"},
        }.items():
            _, answer, _ = probe.jsonrpc_call(method, params, key)
            error = answer.get("error", {})
            found[method] = (error.get("code"), str(error.get("message", "")).replace(task, "<id>"))
    elif transport == "http_json":
        for verb, path in [
            ("GET", f"/tasks/{task}"),
            ("POST", f"/tasks/{task}:cancel"),
            ("GET", f"/tasks/{task}/pushNotificationConfigs"),
        ]:
            found[f"{verb} {path.replace(task, '<id>')}"] = probe.rest_call(
                verb, path, {} if verb == "POST" else None, key
            )[0]
    else:
        for method, request in {
            "GetTask": a2a_pb2.GetTaskRequest(id=task),
            "CancelTask": a2a_pb2.CancelTaskRequest(id=task),
            "SubscribeToTask": a2a_pb2.SubscribeToTaskRequest(id=task),
        }.items():
            found[method] = probe.grpc_call(method, request, key).name
    return found


def _not_found_everywhere(answers: dict[str, Any]) -> bool:
    return all(
        (a[0] == -32001) if isinstance(a, tuple) else a in (404, "NOT_FOUND")
        for a in answers.values()
    )


def _scope_001(probe: Probe, transport: str) -> str:
    task = probe.task_of(probe.key)
    mine = _not_found(probe, transport, task, probe.key)
    theirs = _not_found(probe, transport, task, probe.other_key)
    if _not_found_everywhere(mine):
        return f"the owner cannot use its own task: {mine}"
    if not _not_found_everywhere(theirs):
        return f"another user reaches the task: {theirs}"
    return ""


def _scope_002(probe: Probe, transport: str) -> str:
    task = probe.task_of(probe.key)

    def listed(key: str) -> set[str]:
        if transport == "jsonrpc":
            _, answer, _ = probe.jsonrpc_call("ListTasks", {}, key)
            return {t["id"] for t in answer["result"].get("tasks", [])}
        if transport == "http_json":
            headers = {**V1, HEADER: key}
            return {
                t["id"]
                for t in probe.http.get(f"{probe.rest}/tasks", headers=headers)
                .json()
                .get("tasks", [])
            }
        with grpc.insecure_channel(probe.grpc) as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)  # type: ignore[no-untyped-call]
            answer = stub.ListTasks(
                a2a_pb2.ListTasksRequest(), metadata=[(HEADER.lower(), key)], timeout=30
            )
            return {t.id for t in answer.tasks}

    if task not in listed(probe.key):
        return "the owner's ListTasks misses its task"
    if task in listed(probe.other_key):
        return "another user's ListTasks shows the task"
    return ""


def _scope_003(probe: Probe, transport: str) -> str:
    task = probe.task_of(probe.key)
    theirs = _not_found(probe, transport, task, probe.other_key)
    nobody = _not_found(probe, transport, f"task-{uuid.uuid4()}", probe.other_key)
    if theirs != nobody:  # ids are masked: the answers must be the same, word for word
        return f"another user's task {theirs} differs from a missing one {nobody}"
    return ""


REQUIREMENTS: dict[str, Callable[[Probe, str], str]] = {
    "AUTH-SERVER-002": _server_002,
    "AUTH-SCOPE-001": _scope_001,
    "AUTH-SCOPE-002": _scope_002,
    "AUTH-SCOPE-003": _scope_003,
}


def check(base_url: str, key: str, other_key: str) -> list[dict[str, str]]:
    """One outcome record per requirement and transport (``tck_outcomes`` format)."""
    probe = Probe(base_url, key, other_key)
    records: list[dict[str, str]] = []
    declared = bool(probe.card.get("securitySchemes")) and bool(
        probe.card.get("securityRequirements")
    )
    records.append(
        {
            "id": "auth card declares the scheme",
            "transport": "any",
            "level": "must",
            "outcome": "passed" if declared else "failed",
            "reason": "" if declared else "no securitySchemes / securityRequirements on the card",
        }
    )
    for requirement, run in REQUIREMENTS.items():
        for transport in ("jsonrpc", "http_json", "grpc"):
            try:
                reason = run(probe, transport)
            except Exception as exc:  # a probe that cannot run is a failure, with why
                reason = f"{type(exc).__name__}: {exc}"[:300]
            records.append(
                {
                    "id": f"{requirement} ({transport})",
                    "transport": transport,
                    "level": "must",
                    "outcome": "failed" if reason else "passed",
                    "reason": reason,
                }
            )
    return records
