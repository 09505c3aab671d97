"""What a user sees of an A2A answer: the executable reference of ``docs/specs/trpc-interaction.md``
§11, a small, slow function from the frames of a stream (or one unary result) to the
messages shown — each with its id, its answer text, its reasoning and its tool calls —
and the run's error.

It reads the neutral frames (:mod:`trpc_bridge.codecs.a2a.frames`; ``read_result`` reads
either wire's JSON into them) and nothing of the bridge's decoder. Other tests compare the
decoder, the ``call`` printer and the proxy against it; interop tests may use it for any
peer's recorded output (``stream_view`` / ``unary_view``).

It works in two passes, so that each rule stays one small function:

1. *units*: every message, status message, history message and artifact that carries
   something, in the order of first appearance, with its final content (artifact chunks
   added or replaced, the pieces of one message joined);
2. *shown*: the units in order, less the copies of what was shown just before them.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from trpc_bridge.codecs.a2a.frames import (
    ArtifactFrame,
    Frame,
    StatusFrame,
    TaskFrame,
    WireArtifact,
    WireMessage,
    WirePart,
)

#: Part metadata that marks a text part as reasoning (§11.2), by framework.
REASONING_MARKERS: tuple[tuple[str, object], ...] = (
    ("thought", True),  # trpc-agent-go / trpc-agent-python
    ("adk_thought", True),  # Google ADK
    ("type", "thinking"),  # pydantic-ai (fasta2a)
    ("_agentscope_block_type", "thinking"),  # AgentScope
)
#: States that end a run with an error (§11.7).
FAILURE_STATES = frozenset({"failed", "canceled", "rejected"})
#: States after which nothing more belongs to the run.
TERMINAL_STATES = FAILURE_STATES | {"completed", "input-required", "auth-required"}
#: trpc's marker of a streamed piece: added to its artifact even without ``append``.
CHUNK = "chat.completion.chunk"


@dataclass(frozen=True)
class Shown:
    """One message as the user sees it."""

    id: str
    text: str = ""
    reasoning: str = ""
    #: The names of its tool calls, in order.
    tools: tuple[str, ...] = ()
    #: Its tool calls as (name, arguments) and tool results as (name, response), the
    #: values as the wire had them (readers compare them as JSON values, not here).
    calls: tuple[tuple[str, Any], ...] = field(default=(), compare=False)
    results: tuple[tuple[str, Any], ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class UserView:
    messages: tuple[Shown, ...]
    #: The text of the run's failure; ``None`` when the run did not fail.
    error: str | None = None

    @property
    def answer(self) -> str:
        return "".join(m.text for m in self.messages)

    @property
    def reasoning(self) -> str:
        return "".join(m.reasoning for m in self.messages)

    def merged(self) -> UserView:
        """Adjacent messages without an id joined: nothing tells them apart (§11.4)."""
        out: list[Shown] = []
        for message in self.messages:
            if out and not message.id and not out[-1].id:
                last = out[-1]
                message = Shown(
                    "",
                    last.text + message.text,
                    last.reasoning + message.reasoning,
                    last.tools + message.tools,
                    last.calls + message.calls,
                    last.results + message.results,
                )
                out[-1] = message
            else:
                out.append(message)
        return replace(self, messages=tuple(out))


# --- parts ----------------------------------------------------------------------------


def is_reasoning(metadata: Mapping[str, Any]) -> bool:
    return any(
        metadata.get(key) == value and type(metadata.get(key)) is type(value)
        for key, value in REASONING_MARKERS
    )


def _tool(part: WirePart) -> tuple[str, str, Any]:
    """(``function_call`` / ``function_response`` / ``""``, name, arguments or response)
    of a DataPart (§11.2): typed by ``adk_type``, else ``type``; a call needs a name."""
    adk = part.metadata.get("adk_type")
    kind = adk if isinstance(adk, str) else part.metadata.get("type")
    data = part.data if isinstance(part.data, Mapping) else {}
    name = data.get("name")
    if kind == "function_call" and isinstance(name, str) and name:
        return kind, name, data.get("args")
    if kind == "function_response":
        return kind, name if isinstance(name, str) else "", data.get("response")
    return "", "", None


@dataclass
class _Unit:
    """Something shown: a message's or an artifact's content so far."""

    key: str
    #: Copies of it are recognised up to whitespace and Unicode normalisation.
    loose: bool
    #: An artifact of a unary Task: it may complete the one kept before it (a remnant).
    kept: bool = False
    #: A message of a unary Task's history: several of them repeated by the next one
    #: are that one's pieces.
    history: bool = False
    text: str = ""
    reasoning: str = ""
    tools: list[str] = field(default_factory=list)
    calls: list[tuple[str, Any]] = field(default_factory=list)
    results: list[tuple[str, Any]] = field(default_factory=list)

    def add(self, parts: Iterable[WirePart]) -> None:
        for part in parts:
            if part.kind == "text" and is_reasoning(part.metadata):
                self.reasoning += part.text
            elif part.kind == "text":
                self.text += part.text
            elif part.kind == "data":
                kind, name, value = _tool(part)
                if kind == "function_call":
                    self.tools.append(name)
                    self.calls.append((name, value))
                elif kind == "function_response":
                    self.results.append((name, value))

    def empty(self) -> bool:
        return not (self.text or self.reasoning or self.tools or self.results)


def _content(parts: Iterable[WirePart]) -> _Unit:
    unit = _Unit("", False)
    unit.add(parts)
    return unit


# --- ids ------------------------------------------------------------------------------


def response_id(*maps: Mapping[str, Any]) -> str:
    """The response a message belongs to (§11.4): trpc's ``llm_response_id``, else ADK's
    ``adk_custom_metadata.llm_response_id`` or ``adk_event_id``; later maps win."""
    merged: dict[str, Any] = {}
    for m in maps:
        merged.update(m)
    found = merged.get("llm_response_id")
    if isinstance(found, str) and found:
        return found
    custom = merged.get("adk_custom_metadata")
    if isinstance(custom, str):
        try:
            custom = json.loads(custom)
        except json.JSONDecodeError:
            custom = None
    if isinstance(custom, Mapping):
        found = custom.get("llm_response_id")
        if isinstance(found, str) and found:
            return found
    found = merged.get("adk_event_id")
    return found if isinstance(found, str) else ""


# --- pass 1: units --------------------------------------------------------------------


@dataclass
class _Units:
    units: list[_Unit] = field(default_factory=list)
    messages: dict[str, _Unit] = field(default_factory=dict)
    artifacts: dict[str, _Unit] = field(default_factory=dict)
    error: str | None = None
    over: bool = False

    def message(
        self, message: WireMessage, outer: Mapping[str, Any], *, loose: bool, history: bool = False
    ) -> None:
        if message.role == "user":
            return  # the request, echoed
        new = _content(message.parts)
        if new.empty():
            return
        key = response_id(message.metadata, outer) or message.message_id
        known = self.messages.get(key) if key else None
        if known is None:
            new.key, new.loose, new.history = key, loose, history
            self.units.append(new)
            if key:
                self.messages[key] = new
        elif (new.text, new.reasoning, new.tools, new.results) != (
            known.text,
            known.reasoning,
            [],
            [],
        ):
            # A piece of the same message (the whole of it once more adds nothing).
            known.text += new.text
            known.reasoning += new.reasoning
            known.tools += new.tools
            known.calls += new.calls
            known.results += new.results

    def artifact(
        self, artifact: WireArtifact, outer: Mapping[str, Any], *, append: bool, kept: bool = False
    ) -> None:
        key = artifact.artifact_id
        metadata = {**artifact.metadata, **outer}
        known = self.artifacts.get(key) if key else None
        if known is None:
            # Shown under trpc's response id when it names one (its unary Task's artifact).
            shown = metadata.get("llm_response_id")
            known = _Unit(shown if isinstance(shown, str) and shown else key, True, kept)
            self.units.append(known)
            if key:
                self.artifacts[key] = known
        elif not (append or metadata.get("object_type") == CHUNK):
            known.text, known.reasoning, known.tools, known.calls, known.results = (
                "",
                "",
                [],
                [],
                [],
            )
        known.add(artifact.parts)

    def status(self, state: str, message: WireMessage | None, outer: Mapping[str, Any]) -> None:
        if state in FAILURE_STATES:
            text = _content(message.parts).text if message is not None else ""
            self.error = text or f"remote task {state}"
        elif message is not None:
            self.message(message, outer, loose=state in TERMINAL_STATES)
        self.over = state in TERMINAL_STATES

    def frame(self, frame: Frame) -> None:
        if self.over:
            return  # nothing belongs to the run after its end
        if isinstance(frame, WireMessage):
            self.message(frame, {}, loose=False)
        elif isinstance(frame, ArtifactFrame):
            self.artifact(frame.artifact, frame.metadata, append=frame.append)
        elif isinstance(frame, StatusFrame):
            self.status(frame.state, frame.message, frame.metadata)
        else:
            # A snapshot in a stream: its history came before the stream (the request).
            for artifact in frame.artifacts:
                self.artifact(artifact, frame.metadata, append=False)
            self.status(frame.state, frame.status_message, frame.metadata)


# --- pass 2: what is shown ------------------------------------------------------------


def normalise(text: str) -> str:
    """Text as compared for copies: NFC, whitespace runs as one space, trimmed."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def _same(copy: str, original: str, *, loose: bool) -> bool:
    return normalise(copy) == normalise(original) if loose else copy == original


def _copied(unit: _Unit, shown: Sequence[_Unit]) -> int:
    """How many of the last units shown before it the unit repeats (§11.6); 0: none."""
    if unit.tools or unit.results or not normalise(unit.text):
        return 0
    for k in range(1, len(shown) + 1):
        run = shown[-k:]
        text = "".join(u.text for u in run)
        reasoning = "".join(u.reasoning for u in run)
        if _same(unit.text, text, loose=unit.loose) and (
            not unit.reasoning or _same(unit.reasoning, reasoning, loose=unit.loose)
        ):
            return k
    return 0


def _pieces_of(unit: _Unit, run: Sequence[_Unit]) -> bool:
    """History messages that the next one repeats whole were its pieces (§11.6)."""
    return (
        unit.history and len(run) > 1 and all(u.history and not (u.tools or u.results) for u in run)
    )


def _is_remnant(before: _Unit, unit: _Unit) -> bool:
    """``before`` holds only the end of ``unit``'s text: what a store that replaced each
    chunk kept of the artifact ``unit`` completes (§11.6). Both have ids: chunks without
    one are artifacts of their own in any store."""
    return (
        before.kept
        and unit.kept
        and bool(before.key and unit.key)
        and not (before.reasoning or before.tools or unit.tools or before.results or unit.results)
        and before.text != unit.text
        and unit.text.endswith(before.text)
    )


def _view(units: _Units) -> UserView:
    shown: list[_Unit] = []
    for unit in units.units:
        if unit.empty():
            continue
        if k := _copied(unit, shown):
            run = shown[-k:]
            if _pieces_of(unit, run):  # one message, under the first piece's id
                text, reasoning = "".join(u.text for u in run), "".join(u.reasoning for u in run)
                shown[-k:] = [
                    _Unit(run[0].key, False, history=True, text=text, reasoning=reasoning)
                ]
            continue
        if shown and _is_remnant(shown[-1], unit):
            shown[-1] = replace(unit, key=shown[-1].key)  # one answer, the remnant's id
        else:
            shown.append(unit)
    messages = tuple(
        Shown(u.key, u.text, u.reasoning, tuple(u.tools), tuple(u.calls), tuple(u.results))
        for u in shown
    )
    return UserView(messages, units.error)


def stream_view(frames: Iterable[Frame]) -> UserView:
    """What the user sees of a stream (``message/stream``, ``SendStreamingMessage``)."""
    units = _Units()
    for frame in frames:
        units.frame(frame)
    return _view(units)


def unary_view(result: Frame) -> UserView:
    """What the user sees of a unary result (``message/send``, ``SendMessage``)."""
    units = _Units()
    if isinstance(result, TaskFrame):
        for message in result.history:
            units.message(message, {}, loose=False, history=True)
        for artifact in result.artifacts:
            units.artifact(artifact, result.metadata, append=False, kept=True)
        units.status(result.state, result.status_message, result.metadata)
    else:
        units.frame(result)
    return _view(units)


__all__ = [
    "REASONING_MARKERS",
    "Shown",
    "UserView",
    "is_reasoning",
    "normalise",
    "response_id",
    "stream_view",
    "unary_view",
]
