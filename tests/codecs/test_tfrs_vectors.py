"""Golden vectors of the tfrs progress envelope (docs/specs/tfrs-progress.md): T01–T10 producer
(every kind and status, open tools at the end, errors, the 8 KB / 64 KB / 64 KB + 1 limits, the
``seq`` start), T11–T12 the tolerant reader (every kind; ``v: 2``, broken JSON and every
malformed field → pseudo-envelope), T13–T15 the consumer's merge (duplicates,
reordering, gaps, 0.3 / 1.0 / ``tasks/get`` sources, turns), T16 envelopes → events,
T17 results with their progress taken out (what the content decoder sees).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a.types import TaskState
from google.protobuf.json_format import MessageToDict
from tfrs_vectors import cases, load

from trpc_bridge.codecs.a2a.frames import read_result
from trpc_bridge.codecs.tfrs import (
    METADATA_KEY,
    ProgressConsumer,
    ProgressEvents,
    ProgressItem,
    ProgressProducer,
    content_only,
    read_envelope,
    working_update,
)
from trpc_bridge.events import AgentEvent, ObjectType

PRODUCE = cases("tfrs-produce")


def _produce(case: dict[str, Any]) -> list[dict[str, Any]]:
    producer = ProgressProducer(**case["options"])
    updates = [u for raw in case["input"] for u in producer.updates(AgentEvent.model_validate(raw))]
    updates += {"close": producer.close, "abort": producer.abort}[case["end"]]()
    wire = []
    for update in updates:
        frame = MessageToDict(working_update(update, task_id="t", context_id="c"))
        assert frame["status"]["state"] == "TASK_STATE_WORKING"
        (part,) = frame["status"]["message"]["parts"]  # one Part: at most one envelope
        metadata = part.get("metadata", {})
        envelope = metadata.get(METADATA_KEY)
        assert envelope is None or isinstance(envelope, str)  # a JSON string, not a Struct
        wire.append({"text": part["text"], "tfrs": json.loads(envelope) if envelope else None})
    return wire


@pytest.mark.parametrize(("name", "case"), PRODUCE, ids=[n for n, _ in PRODUCE])
def test_produce_vector(name: str, case: dict[str, Any]) -> None:
    assert _produce(case) == case["expect"]


def test_envelope_string_is_compact_utf8_in_seed_key_order() -> None:
    producer = ProgressProducer(seq_start=42)
    (update,) = producer.updates(AgentEvent.tool_call("问", {}, call_id="k", response_id="r"))
    assert update.envelope is not None
    assert update.envelope.to_json() == (
        '{"v":1,"kind":"tool_call","streamKey":"k","seq":42,"status":"running",'
        '"payload":{"tool":"问","tool_call_id":"k"}}'
    )


DECODE = [(f"{v['id']}:{c['name']}", c) for v in load("tfrs-decode") for c in v["cases"]]


@pytest.mark.parametrize(("name", "case"), DECODE, ids=[n for n, _ in DECODE])
def test_decode_vector(name: str, case: dict[str, Any]) -> None:
    part = case["part"]
    envelope, problem = read_envelope(part["text"], part["metadata"])
    assert envelope.model_dump(by_alias=True, exclude_none=True) == case["expect"]
    assert envelope.pseudo == bool(case["problem"])
    assert case["problem"] in problem if case["problem"] else problem == ""


def _item_id(item: ProgressItem) -> Any:
    return item.text if item.pseudo else list(item.envelope.key)


def _task_view(consumer: ProgressConsumer, task_id: str, want: dict[str, Any]) -> dict[str, Any]:
    merger = consumer.merger(task_id)
    streams = {}
    for key, view in merger.streams().items():
        fields = want["streams"].get(key, {})
        streams[key] = {
            f: list(getattr(view, f)) if f == "seqs" else getattr(view, f) for f in fields
        }
    return {
        "blocks": [list(b.key) for b in merger.blocks],
        "streams": streams,
        "loose": [i.text for i in merger.loose],
    }


@pytest.mark.parametrize("vector", load("tfrs-merge"), ids=lambda v: v["id"])
def test_merge_vector(vector: dict[str, Any]) -> None:
    consumer = ProgressConsumer()
    new = [_item_id(item) for result in vector["input"] for item in consumer.feed(result)]
    expect = vector["expect"]
    assert new == expect["new"]
    assert sorted(consumer.task_ids) == sorted(expect["tasks"])
    for task_id, want in expect["tasks"].items():
        assert _task_view(consumer, task_id, want) == want


def _event_view(event: AgentEvent, groups: dict[str, int]) -> dict[str, Any]:
    message = event.choices[0].message
    if event.object == ObjectType.TOOL_RESPONSE:
        return {"result": message.tool_name, "id": message.tool_id, "content": message.content}
    if message.tool_calls:
        (call,) = message.tool_calls
        return {"call": call.function.name, "id": call.id, "arguments": call.function.arguments}
    assert event.is_partial and not event.done and event.error is None  # never the outcome
    group = groups.setdefault(event.id, len(groups))
    return {"reasoning": event.choices[0].delta.reasoning_content, "group": group}


@pytest.mark.parametrize("vector", load("tfrs-events"), ids=lambda v: v["id"])
def test_events_vector(vector: dict[str, Any]) -> None:
    consumer, mapper = ProgressConsumer(), ProgressEvents(invocation_id="inv", author="peer")
    events = [e for r in vector["input"] for i in consumer.feed(r) for e in mapper.events(i)]
    groups: dict[str, int] = {}
    assert [_event_view(e, groups) for e in events] == vector["expect"]
    assert {(e.invocation_id, e.author) for e in events} == {("inv", "peer")}


def test_status_is_working_even_for_a_dropped_block() -> None:
    producer = ProgressProducer(hard_limit=4, soft_limit=2)
    (update,) = producer.updates(AgentEvent.reasoning_delta("12345", "r"))
    assert update.envelope is None
    frame = working_update(update, task_id="t", context_id="c")
    assert frame.status.state == TaskState.TASK_STATE_WORKING
    assert not frame.status.message.parts[0].metadata


CONTENT = [(f"{v['id']}:{c['name']}", c) for v in load("tfrs-content") for c in v["cases"]]


@pytest.mark.parametrize(("name", "case"), CONTENT, ids=[n for n, _ in CONTENT])
def test_content_only_vector(name: str, case: dict[str, Any]) -> None:
    assert content_only(read_result(case["input"])) == read_result(case["expect"])
