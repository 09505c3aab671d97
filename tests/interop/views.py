"""What a user of each client sees of one call, reduced to what a matrix cell compares.

A :class:`View` holds, per response, the text and reasoning a client shows, and the tool
calls and results, in order. Folding is by the client's own response id, and a
non-partial (complete) event's text replaces the partial pieces of its id — the rule
every framework documents. So a cell's view equals the scenario's exactly when the
content is the scenario's, no text is shown twice, and ids are stable per response (a
response split across ids shows up as several texts instead of one).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from user_view import stream_view, unary_view

from trpc_bridge.codecs.a2a.frames import read_result
from trpc_bridge.events import AgentEvent
from trpc_bridge.message_aggregate import aggregate

#: The scenarios' error message (``error``: code E42, message "boom").
ERROR_TEXT = "boom"


def _json(value: Any) -> Any:
    """Tool arguments and results compare as JSON values, whatever their spelling:
    Go's compact string, Python's spaced one, an object, or an object wrapping a string."""
    if isinstance(value, str):
        try:
            return _json(json.loads(value))
        except json.JSONDecodeError:
            return value
    if isinstance(value, Mapping) and len(value) == 1:
        ((key, inner),) = value.items()
        if key in ("result", "content") and isinstance(inner, str):
            return _json(inner)
    return value


@dataclass(frozen=True)
class View:
    texts: tuple[str, ...] = ()
    thoughts: tuple[str, ...] = ()
    calls: tuple[tuple[str, str], ...] = ()
    results: tuple[tuple[str, str], ...] = ()
    #: An error carrying the scenario's error message ("boom") was shown.
    error: bool = False
    #: Content events without a response id (stable ids need one).
    unidentified: int = 0
    #: Texts the caller's session kept (its history), when the client has one.
    history: tuple[str, ...] | None = field(default=None, compare=False)


def _canon(value: Any) -> str:
    return json.dumps(_json(value), ensure_ascii=False, sort_keys=True)


def bridge_view(events: Iterable[AgentEvent]) -> View:
    """The bridge's own client (``RemoteAgent``) folded by ``aggregate``."""
    messages = aggregate(events)
    return View(
        texts=tuple(m.text for m in messages if m.text),
        thoughts=tuple(m.reasoning for m in messages if m.reasoning),
        calls=tuple(
            (c.function.name, _canon(c.function.arguments)) for m in messages for c in m.tool_calls
        ),
        results=tuple((r.name, _canon(r.content)) for m in messages for r in m.tool_results),
        error=any(m.error is not None and ERROR_TEXT in m.error.message for m in messages),
    )


@dataclass
class _Group:
    """One response id: its streamed pieces, and its complete text once it arrives."""

    partial_text: str = ""
    partial_thought: str = ""
    text: str = ""
    thought: str = ""


def _shown(texts: Iterable[str]) -> tuple[str, ...]:
    return tuple(t for t in texts if t)


def _folded(groups: dict[str, _Group], **rest: Any) -> View:
    """The view of responses folded by id (a complete text replaces its pieces)."""
    return View(
        texts=_shown(g.text or g.partial_text for g in groups.values()),
        thoughts=_shown(g.thought or g.partial_thought for g in groups.values()),
        **rest,
    )


def peer_view(answer: Mapping[str, Any], id_key: str) -> View:
    """A framework client's events (interop/python records) folded by ``id_key``."""
    groups: dict[str, _Group] = {}
    calls: list[tuple[str, str]] = []
    results: list[tuple[str, str]] = []
    error = False
    unidentified = 0
    for number, event in enumerate(answer["events"]):
        parts = event.get("parts", [])
        err = event.get("error") or {}
        if ERROR_TEXT in str(err.get("message", "")) or "E42" in str(err.get("code", "")):
            error = True
        if not parts:
            continue
        key = event.get(id_key) or ""
        if not key:
            unidentified += 1
            key = f"#{number}"
        group = groups.setdefault(key, _Group())
        # A framework shows a failed run's message as text (ADK: only as text): that is
        # the error shown, not one more answer.
        text = "".join(p.get("text", "") for p in parts if p.get("text") != ERROR_TEXT)
        thought = "".join(p.get("thought", "") for p in parts)
        if event.get("partial"):
            group.partial_text += text
            group.partial_thought += thought
        else:  # the complete response: its text replaces the pieces
            group.text = text or group.text
            group.thought = thought or group.thought
        for part in parts:
            if "function_call" in part:
                call = part["function_call"]
                calls.append((call["name"], _canon(call.get("args"))))
            if "function_response" in part:
                response = part["function_response"]
                results.append((response["name"], _canon(response.get("response"))))
            if part.get("text") == ERROR_TEXT:
                error = True
    history = None
    if "session" in answer:
        history = tuple(
            "".join(p.get("text", "") for p in e.get("parts", []))
            for e in answer["session"]
            if not e.get("partial")
        )
        history = tuple(t for t in history if t)
    return _folded(
        groups,
        calls=tuple(calls),
        results=tuple(results),
        error=error,
        unidentified=unidentified,
        history=history,
    )


def adk_previews(answer: Mapping[str, Any]) -> dict[str, Any]:
    """Google ADK for TypeScript's events with a ``response_id`` each, for
    :func:`peer_view`: the model's response id its client carries when the server sent
    one, else ADK's streaming rule: partial events are previews of the next complete
    event (they take its id; ADK mints a fresh id per event)."""
    events = [dict(e) for e in answer["events"]]
    following = ""
    for event in reversed(events):
        if not event.get("partial"):
            following = event["id"]
        if not event.get("response_id"):
            event["response_id"] = event["id"] if not event.get("partial") else following
    return {**answer, "events": events}


def go_view(events: list[dict[str, Any]]) -> View:
    """trpc-agent-go's ``A2AAgent`` events (``gopeer call`` lines), folded by id the way
    its AG-UI translator groups them: deltas joined, a non-partial message replaces."""
    groups: dict[str, _Group] = {}
    calls: list[tuple[str, str]] = []
    results: list[tuple[str, str]] = []
    error = False
    for number, event in enumerate(events):
        if ERROR_TEXT in json.dumps(event.get("error", {})):
            error = True
        for choice in event.get("choices", []):
            message, delta = choice.get("message", {}), choice.get("delta", {})
            for call in message.get("tool_calls", []):
                function = call.get("function", {})
                calls.append((function.get("name", ""), _canon(function.get("arguments", ""))))
            if message.get("role") == "tool":
                results.append((message.get("tool_name", ""), _canon(message.get("content", ""))))
                continue
            group = groups.setdefault(event.get("id") or f"#{number}", _Group())
            if event.get("is_partial"):
                group.partial_text += delta.get("content", "")
                group.partial_thought += delta.get("reasoning_content", "")
            else:
                group.text = message.get("content") or group.text
                group.thought = message.get("reasoning_content") or group.thought
    return _folded(groups, calls=tuple(calls), results=tuple(results), error=error)


# --- an A2A SDK's client: A2A frames, read by the model of what a user sees -------------


def a2a_view(frames: Iterable[Mapping[str, Any]], *, unary: bool = False) -> View:
    """What a user of an A2A SDK's client sees of the results it received — stream frames,
    or (``unary``) the Task / Message of a unary call, in either wire's JSON: the model of
    docs/specs/trpc-interaction.md §11 (``tests/user_view.py``), reduced to what a cell compares."""
    results = [read_result(frame) for frame in frames]
    shown = unary_view(results[-1]) if unary else stream_view(results)
    messages = shown.messages
    return View(
        texts=tuple(m.text for m in messages if m.text),
        thoughts=tuple(m.reasoning for m in messages if m.reasoning),
        calls=tuple((name, _canon(args)) for m in messages for name, args in m.calls),
        results=tuple((name, _canon(out)) for m in messages for name, out in m.results),
        error=shown.error is not None and ERROR_TEXT in shown.error,
    )
