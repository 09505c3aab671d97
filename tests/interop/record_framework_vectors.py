"""Record golden vectors from the Python framework peers' own A2A servers (run by hand):

    .venv/bin/python tests/interop/record_framework_vectors.py

writes ``tests/vectors/TP*.json`` (trpc-agent-python, ``a2a`` extra, 0.3 wire),
``TV*.json`` (trpc-agent-python, ``a2a-v1`` extra, 1.0 wire) and ``AD*.json`` (Google ADK,
1.0 wire): the raw JSON-RPC results of ``message/stream`` / ``SendStreamingMessage`` and
of ``message/send`` / ``SendMessage`` for a scenario, and the messages the decoder must
fold them into (``expect_messages``: one per response, under the script's response id).
``tests/test_vectors_frameworks.py`` checks them. Volatile values (task, context and
message ids, timestamps) are kept as recorded: the checks do not compare them.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))
from frameworks import ADK, TRPC_PY, TRPC_PY_V1, Framework, peer_servers

VECTORS = Path(__file__).resolve().parents[1] / "vectors"

#: What each recorded scenario must decode to (ids: the script's response ids).
EXPECT: dict[str, list[dict[str, Any]]] = {
    "tool": [
        {"id": "chatcmpl-tool-1", "tool_calls": [["get_weather", {"city": "Beijing"}]]},
        {"tool_results": [["get_weather", {"city": "Beijing", "temp": "20°C"}]]},
        {"id": "chatcmpl-tool-2", "text": "It is 20°C in Beijing."},
    ],
    "reasoning": [
        {
            "id": "chatcmpl-reason-1",
            "reasoning": "Let me think about it.",
            "text": "The answer is 42.",
        },
    ],
}

UNARY_ADK_NOTE = (
    "ADK's task store keeps no metadata on history messages or artifacts: a unary result "
    "has no response ids to keep, so none are expected"
)

#: (vector id, framework, scenario, mode) recorded.
PLAN = [
    ("TP01", TRPC_PY, "tool", "stream"),
    ("TP02", TRPC_PY, "reasoning", "stream"),
    ("TP03", TRPC_PY, "tool", "unary"),
    ("TV01", TRPC_PY_V1, "tool", "stream"),
    ("TV02", TRPC_PY_V1, "tool", "unary"),
    ("AD01", ADK, "tool", "stream"),
    ("AD02", ADK, "reasoning", "stream"),
    ("AD03", ADK, "tool", "unary"),
]


def _request(framework: Framework, stream: bool) -> tuple[dict[str, Any], dict[str, str]]:
    message_id = f"msg-{uuid.uuid4()}"
    if framework.wire == "v0":
        params = {
            "message": {
                "kind": "message",
                "messageId": message_id,
                "role": "user",
                "parts": [{"kind": "text", "text": "hi"}],
                "contextId": "ctx-vectors",
            }
        }
        method = "message/stream" if stream else "message/send"
        return {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}, {}
    params = {
        "message": {
            "messageId": message_id,
            "role": "ROLE_USER",
            "parts": [{"text": "hi"}],
            "contextId": "ctx-vectors",
        }
    }
    method = "SendStreamingMessage" if stream else "SendMessage"
    body = {"jsonrpc": "2.0", "id": "r1", "method": method, "params": params}
    return body, {"A2A-Version": "1.0"}


def _record(framework: Framework, url: str, stream: bool) -> Any:
    body, headers = _request(framework, stream)
    with httpx.Client(timeout=120) as http:
        if not stream:
            return http.post(url, json=body, headers=headers).json()["result"]
        results = []
        with http.stream("POST", url, json=body, headers=headers) as response:
            for line in response.iter_lines():
                if line.startswith("data:"):
                    results.append(json.loads(line[5:])["result"])
        return results


def main() -> None:
    frameworks = {f.key: f for _, f, _, _ in PLAN}
    for key, framework in frameworks.items():
        with peer_servers(framework) as running:
            version = framework.version()
            for vector_id, f, scenario, mode in PLAN:
                if f.key != key:
                    continue
                recorded = _record(framework, running.urls[scenario], mode == "stream")
                wire = "0.3" if framework.wire == "v0" else "1.0"
                vector = {
                    "id": vector_id,
                    "title": f"{scenario} scenario, {mode}, recorded from {version}",
                    "direction": "decode-recorded",
                    "mode": mode,
                    "wire": wire,
                    "source": f"interop/python/{framework.program} serve ({framework.key})",
                    "input": recorded,
                    "expect_messages": EXPECT[scenario],
                }
                if framework is ADK and mode == "unary":
                    vector["note"] = UNARY_ADK_NOTE
                    vector["expect_messages"] = [
                        {k: v for k, v in m.items() if k != "id"} for m in EXPECT[scenario]
                    ]
                path = VECTORS / f"{vector_id}.json"
                path.write_text(json.dumps(vector, ensure_ascii=False, indent=1) + "\n")
                print(f"wrote {path}")


if __name__ == "__main__":
    main()
