"""Generated A2A runs for the "what the user sees" properties (``docs/specs/trpc-interaction.md``
§11).

A :class:`Run` is what an agent said, as segments — text streamed in status messages,
text streamed as an artifact, a tool call, a copy of what came just before — and how it
went on the wire: the first frame, the end, the wire version, how much history a unary
Task keeps. :func:`stream_json` and :func:`unary_json` render it as a server would send
it (JSON of either wire); :func:`expected_stream` and :func:`expected_unary` say what the
user must see, from the segments alone, without the model's rules about frames.

Everything §11 lets a server vary is drawn: status-only, artifact-only and both;
``append`` true, false or absent; chunk boundaries inside words and inside characters
(between a letter and its combining accent, inside emoji sequences); trailing
whitespace and another Unicode normal form on a copy; repeated, early or missing
``lastChunk``; history with and without the answer; reasoning under every marker;
several artifacts; ids present and absent; both wires.

Texts never repeat by accident: each segment's text starts with a token of its own, and
a piece that would repeat the pieces just before it is rejected (§11.6 reads such a
piece as a copy; the generator only makes runs whose reading is not in doubt).
"""

from __future__ import annotations

import copy
import itertools
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hypothesis import assume
from hypothesis import strategies as st
from user_view import REASONING_MARKERS, Shown, UserView, normalise

Wire = Literal["0.3", "1.0"]
TASK_ID = "task-1"
CONTEXT_ID = "ctx-1"

#: Words with several code points per character (combining accents, emoji sequences,
#: flags), CJK, and plain ASCII.
WORDS = (
    "hello",
    "wörld",
    "cafe\u0301",  # e + combining acute
    "naïve",
    "中文",
    "日本語",
    "😀",
    "👍🏽",  # thumbs up + skin tone
    "👩\u200d💻",  # ZWJ sequence
    "🇫🇷",  # two regional indicators
    "ok",
    "42",
    "a",
    "the",
)
SEPARATORS = (" ", " ", "", "\n", "  ", "\t")


# --- the run ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Piece:
    """One message or chunk: some answer text and/or some reasoning."""

    text: str = ""
    reasoning: str = ""
    #: ``""``: no messageId on the wire.
    message_id: str = ""


@dataclass(frozen=True)
class StatusText:
    """Text streamed in ``working`` status messages, one piece per message."""

    pieces: tuple[Piece, ...]
    #: A response id the pieces share (trpc's ``llm_response_id``), ``""`` for none.
    response_id: str = ""
    #: Where it travels: the message's metadata (a Task's history keeps it) or the
    #: event's (ADK: the history loses it).
    on_event: bool = False
    #: After the pieces, the whole text once more under the same response id (ADK).
    whole: bool = False
    marker: int = 0


@dataclass(frozen=True)
class ArtifactText:
    """Text streamed as the chunks of one artifact."""

    chunks: tuple[Piece, ...]
    artifact_id: str
    #: ``append`` of the first chunk: True, False or absent (None).
    first_append: bool | None = None
    #: Later chunks say ``append: true``, or (Go v0) nothing but trpc's chunk marker, and
    #: the full text follows as trpc's ``chat.completion``.
    go_v0: bool = False
    #: After the chunks, the whole text once more with ``append`` false / absent: A2A's
    #: replacement (``"false"``, ``"absent"``), or no such frame (``""``).
    replace_whole: str = ""
    #: ``last``: on the last frame; ``missing``; ``repeated``: an extra empty frame
    #: with ``lastChunk`` after it; ``early``: on the first frame too.
    last_chunk: str = "last"
    marker: int = 0


@dataclass(frozen=True)
class ToolCall:
    on_artifact: bool
    unit_id: str
    name: str
    call_id: str
    #: The DataPart type key: trpc's ``type`` or ADK's ``adk_type``.
    adk: bool = False
    #: ``"type": "function"`` in the data (trpc writes it, ADK does not).
    typed: bool = True


@dataclass(frozen=True)
class Copy:
    """The text of the last ``covers`` segments once more: an artifact (Strands, ADK,
    trpc-agent-python, pydantic-ai) or the final status message."""

    covers: int
    artifact_id: str = ""
    trailing: str = "\n"
    leading: str = ""
    nfd: bool = False
    with_reasoning: bool = False
    last_chunk: bool = True
    #: In the ``completed`` status message instead of an artifact.
    as_status: bool = False
    message_id: str = ""
    #: A later chunk adds this: the artifact began as a copy and is more (shown whole).
    grows: str = ""


Segment = StatusText | ArtifactText | ToolCall | Copy


@dataclass(frozen=True)
class Run:
    segments: tuple[Segment, ...]
    wire: Wire = "0.3"
    #: ``task`` (a2a-sdk), ``submitted`` (a status echoing the request), ``working``
    #: (a bare working status), ``none``.
    start: str = "task"
    #: ``completed``, ``completed-message`` (a status message of its own), ``failed``,
    #: ``failed-text``.
    end: str = "completed"
    end_text: str = ""
    end_message_id: str = ""
    #: The unary Task keeps the agent's messages in its history (a2a-sdk does) or not.
    history: bool = True
    #: The whole run is one agent Message (no task).
    as_message: bool = False


# --- strategies ---------------------------------------------------------------------------


#: A word with what comes before it (one draw each).
_SPACED = tuple(separator + word for separator in SEPARATORS for word in WORDS)


@st.composite
def _text(draw: st.DrawFn, token: str) -> str:
    words = draw(st.lists(st.sampled_from(_SPACED), min_size=0, max_size=5))
    return token + "".join(words) + draw(st.sampled_from(("", "", " ", "\n")))


@st.composite
def _cuts(draw: st.DrawFn, text: str, most: int) -> list[str]:
    """``text`` in 1..most pieces, cut at any code point (inside words and characters)."""
    if len(text) < 2 or most < 2:
        return [text]
    count = draw(st.integers(0, min(most - 1, len(text) - 1)))
    cuts = sorted(draw(st.sets(st.integers(1, len(text) - 1), min_size=count, max_size=count)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def repeats(pieces: Sequence[Piece], *, loose: bool, whole: bool = False) -> bool:
    """A piece whose text repeats the pieces just before it (or, with ``whole``, whose
    text and reasoning equal everything before it): a run §11.6 reads as a copy."""
    for i, piece in enumerate(pieces):
        if (
            whole
            and i
            and (piece.text, piece.reasoning)
            == (
                "".join(p.text for p in pieces[:i]),
                "".join(p.reasoning for p in pieces[:i]),
            )
        ):
            return True
        if not normalise(piece.text):
            continue
        for k in range(1, i + 1):
            before = "".join(p.text for p in pieces[i - k : i])
            same = normalise(before) == normalise(piece.text) if loose else before == piece.text
            if same:
                return True
    return False


@st.composite
def _pieces(draw: st.DrawFn, index: int, ids: str) -> tuple[Piece, ...]:
    """Reasoning pieces (maybe none), then answer pieces; ``ids``: ``all``, ``none`` or
    ``some`` messageIds."""
    text = draw(_text(f"⟨{index}⟩"))
    reasoning = draw(_text(f"⟪{index}⟫")) if draw(st.booleans()) else ""
    together = reasoning and draw(st.booleans())  # one message with both parts
    pieces: list[Piece] = []
    if together:
        pieces.append(Piece(text=text, reasoning=reasoning))
    else:
        pieces += [Piece(reasoning=r) for r in (draw(_cuts(reasoning, 4)) if reasoning else [])]
        pieces += [Piece(text=t) for t in draw(_cuts(text, 4))]
    with_ids = []
    for n, piece in enumerate(pieces):
        named = ids == "all" or (ids == "some" and draw(st.booleans()))
        with_ids.append(Piece(piece.text, piece.reasoning, f"m{index}-{n}" if named else ""))
    return tuple(with_ids)


@st.composite
def status_texts(draw: st.DrawFn, index: int) -> StatusText:
    ids = draw(st.sampled_from(("all", "all", "none", "some")))
    pieces = draw(_pieces(index, ids))
    response_id = f"resp-{index}" if draw(st.booleans()) else ""
    whole = bool(response_id) and len(pieces) > 1 and draw(st.booleans())
    on_event = bool(response_id) and draw(st.booleans())
    marker = draw(st.integers(0, len(REASONING_MARKERS)))
    assume(not repeats(pieces, loose=False, whole=bool(response_id)))
    return StatusText(pieces, response_id, on_event, whole, marker)


@st.composite
def artifact_texts(draw: st.DrawFn, index: int) -> ArtifactText:
    named = draw(st.integers(0, 5)) > 0
    chunks = draw(_pieces(index, "none"))
    first_append = draw(st.sampled_from((None, False, True)))
    go_v0 = named and draw(st.booleans())
    replace_whole = (
        draw(st.sampled_from(("", "", "false", "absent"))) if named and not go_v0 else ""
    )
    last_chunk = draw(st.sampled_from(("last", "missing", "repeated", "early")))
    if not named:
        last_chunk = "last"
        assume(not repeats(chunks, loose=True))
    marker = draw(st.integers(0, len(REASONING_MARKERS)))
    artifact_id = f"a{index}" if named else ""
    return ArtifactText(chunks, artifact_id, first_append, go_v0, replace_whole, last_chunk, marker)


@st.composite
def tool_calls(draw: st.DrawFn, index: int) -> ToolCall:
    return ToolCall(
        on_artifact=draw(st.booleans()),
        unit_id=f"t{index}",
        name=draw(st.sampled_from(("get_weather", "search", "calc"))),
        call_id=f"call-{index}",
        adk=draw(st.booleans()),
        typed=draw(st.booleans()),
    )


@st.composite
def copies(draw: st.DrawFn, covers: int, index: int) -> Copy:
    return Copy(
        covers=covers,
        artifact_id=f"copy{index}",
        trailing=draw(st.sampled_from(("", "\n", " \n", "\n\n", "  "))),
        leading=draw(st.sampled_from(("", "", " ", "\n"))),
        nfd=draw(st.booleans()),
        with_reasoning=draw(st.booleans()),
        last_chunk=draw(st.booleans()),
        as_status=(as_status := draw(st.integers(0, 3)) == 0),
        message_id=f"final{index}",
        grows="" if as_status or draw(st.integers(0, 3)) else f" ⟨{index}+⟩",
    )


def _is_status(segment: Segment) -> bool:
    return isinstance(segment, StatusText) or (
        isinstance(segment, ToolCall) and not segment.on_artifact
    )


@st.composite
def runs(draw: st.DrawFn) -> Run:
    wire: Wire = draw(st.sampled_from(("0.3", "1.0")))
    if draw(st.integers(0, 9)) == 0:  # the whole answer as one agent Message
        reasoning = draw(_text("⟪0⟫")) if draw(st.booleans()) else ""
        piece = Piece(draw(_text("⟨0⟩")), reasoning, "m0" if draw(st.booleans()) else "")
        marker = draw(st.integers(0, len(REASONING_MARKERS)))
        return Run((StatusText((piece,), marker=marker),), wire, as_message=True)
    shape = draw(st.sampled_from(("status", "artifact", "both", "both")))
    count = draw(st.integers(1, 4))
    segments: list[Segment] = []
    for index in range(count):
        kind = shape if shape != "both" else draw(st.sampled_from(("status", "artifact")))
        if draw(st.integers(0, 6)) == 0:
            segments.append(draw(tool_calls(index)))
        elif kind == "status":
            segments.append(draw(status_texts(index)))
        else:
            segments.append(draw(artifact_texts(index)))
    if shape == "both" and not draw(st.booleans()):
        # Status text first, then the artifacts: what a Task's history then artifacts
        # keep in the same order.
        segments.sort(key=lambda s: not _is_status(s))
    covers = draw(st.integers(0, len(segments)))
    if covers:
        covered = segments[-covers:]
        # A copy of status text must stay right after it in a unary Task too, where the
        # artifacts follow the whole history: no other artifact in such a run.
        if any(_is_status(s) for s in covered):
            assume(all(_is_status(s) for s in segments))
        assume(any(_has_text(s) for s in covered))
        segments.append(draw(copies(covers, count)))
    ends = ["completed", "completed", "completed-message", "failed", "failed-text"]
    if segments and isinstance(segments[-1], Copy) and segments[-1].as_status:
        ends.remove("completed-message")  # the final status message is the copy
    end = draw(st.sampled_from(ends))
    end_text = draw(_text("⟨end⟩")) if end in ("completed-message", "failed-text") else ""
    return Run(
        segments=tuple(segments),
        wire=wire,
        start=draw(st.sampled_from(("task", "task", "submitted", "working", "none"))),
        end=end,
        end_text=end_text,
        end_message_id="end" if draw(st.booleans()) else "",
        history=draw(st.integers(0, 4)) > 0,
    )


def _has_text(segment: Segment) -> bool:
    if isinstance(segment, StatusText):
        return any(p.text for p in segment.pieces)
    if isinstance(segment, ArtifactText):
        return any(p.text for p in segment.chunks)
    return False


# --- 0.3 JSON, then the 1.0 shape ---------------------------------------------------------


def _marker(index: int) -> dict[str, Any]:
    """Reasoning part metadata: one framework's marker, or trpc's two keys together."""
    if index == len(REASONING_MARKERS):
        return {"thought": True, "adk_thought": True}
    key, value = REASONING_MARKERS[index]
    return {key: value}


def _parts(piece: Piece, marker: int) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if piece.reasoning:
        parts.append({"kind": "text", "text": piece.reasoning, "metadata": _marker(marker)})
    if piece.text:
        parts.append({"kind": "text", "text": piece.text})
    return parts


def _message(
    parts: list[dict[str, Any]], message_id: str, *, role: str = "agent", **metadata: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "message", "role": role, "parts": parts}
    if message_id:
        out["messageId"] = message_id
    if metadata:
        out["metadata"] = metadata
    return out


def _status(state: str, message: dict[str, Any] | None = None, **metadata: Any) -> dict[str, Any]:
    status: dict[str, Any] = {"state": state}
    if message is not None:
        status["message"] = message
    out: dict[str, Any] = {
        "kind": "status-update",
        "taskId": TASK_ID,
        "contextId": CONTEXT_ID,
        "status": status,
        "final": state in ("completed", "failed"),
    }
    if metadata:
        out["metadata"] = metadata
    return out


def _artifact(
    artifact_id: str,
    parts: list[dict[str, Any]],
    *,
    append: bool | None,
    last: bool | None,
    **metadata: Any,
) -> dict[str, Any]:
    artifact: dict[str, Any] = {"parts": parts}
    if artifact_id:
        artifact["artifactId"] = artifact_id
    out: dict[str, Any] = {
        "kind": "artifact-update",
        "taskId": TASK_ID,
        "contextId": CONTEXT_ID,
        "artifact": artifact,
    }
    if append is not None:
        out["append"] = append
    if last is not None:
        out["lastChunk"] = last
    if metadata:
        out["metadata"] = metadata
    return out


def _tool_part(tool: ToolCall) -> dict[str, Any]:
    data: dict[str, Any] = {"id": tool.call_id, "name": tool.name, "args": {"q": "x"}}
    if tool.typed:
        data["type"] = "function"
        data["args"] = '{"q": "x"}'
    key = "adk_type" if tool.adk else "type"
    return {"kind": "data", "data": data, "metadata": {key: "function_call"}}


def _text_of(segment: Segment) -> tuple[str, str]:
    """(answer, reasoning) of a segment as the user sees it."""
    if isinstance(segment, StatusText):
        pieces: Sequence[Piece] = segment.pieces
    elif isinstance(segment, ArtifactText):
        pieces = segment.chunks
    else:
        return "", ""
    return "".join(p.text for p in pieces), "".join(p.reasoning for p in pieces)


def _copy_piece(run: Run, index: int) -> Piece:
    copy_segment = run.segments[index]
    assert isinstance(copy_segment, Copy)
    covered = run.segments[index - copy_segment.covers : index]
    text = "".join(_text_of(s)[0] for s in covered)
    reasoning = "".join(_text_of(s)[1] for s in covered) if copy_segment.with_reasoning else ""
    if copy_segment.nfd:
        text = unicodedata.normalize("NFD", text)
        reasoning = unicodedata.normalize("NFD", reasoning)
    return Piece(copy_segment.leading + text + copy_segment.trailing, reasoning)


def _marker_of(run: Run, index: int) -> int:
    for segment in run.segments[index::-1]:
        if isinstance(segment, StatusText | ArtifactText):
            return segment.marker
    return 0


def _status_frames(segment: StatusText) -> list[dict[str, Any]]:
    frames = []
    pieces = list(segment.pieces)
    if segment.whole:
        text, reasoning = _text_of(segment)
        pieces.append(
            Piece(text, reasoning, pieces[-1].message_id + "w" if pieces[-1].message_id else "")
        )
    rid = {"llm_response_id": segment.response_id} if segment.response_id else {}
    for piece in pieces:
        on_message = {} if segment.on_event else rid
        message = _message(_parts(piece, segment.marker), piece.message_id, **on_message)
        frames.append(_status("working", message, **(rid if segment.on_event else {})))
    return frames


def _artifact_frames(segment: ArtifactText) -> list[dict[str, Any]]:
    frames = []
    chunks = segment.chunks
    for n, chunk in enumerate(chunks):
        first = n == 0
        if first:
            append: bool | None = segment.first_append
        elif segment.go_v0:
            append = None
        else:
            append = True
        meta = (
            {"object_type": "chat.completion.chunk", "llm_response_id": segment.artifact_id}
            if segment.go_v0
            else {}
        )
        last = n == len(chunks) - 1 and not segment.replace_whole
        mark = (last and segment.last_chunk in ("last", "early")) or (
            first and segment.last_chunk == "early"
        )
        frames.append(
            _artifact(
                segment.artifact_id,
                _parts(chunk, segment.marker),
                append=append,
                last=True if mark else None,
                **meta,
            )
        )
    if segment.go_v0:  # Go v0 ends a response with its full text, under the same id
        text, reasoning = _text_of(segment)
        completion = {"object_type": "chat.completion", "llm_response_id": segment.artifact_id}
        frames.append(
            _artifact(
                segment.artifact_id,
                _parts(Piece(text, reasoning), segment.marker),
                append=None,
                last=None,
                **completion,
            )
        )
    if segment.replace_whole:
        text, reasoning = _text_of(segment)
        frames.append(
            _artifact(
                segment.artifact_id,
                _parts(Piece(text, reasoning), segment.marker),
                append=False if segment.replace_whole == "false" else None,
                last=segment.last_chunk in ("last", "early"),
            )
        )
    if segment.last_chunk == "repeated":
        frames.append(_artifact(segment.artifact_id, [], append=True, last=True))
        frames.append(_artifact(segment.artifact_id, [], append=True, last=True))
    return frames


def _tool_frame(tool: ToolCall) -> dict[str, Any]:
    if tool.on_artifact:
        return _artifact(tool.unit_id, [_tool_part(tool)], append=False, last=True)
    return _status("working", _message([_tool_part(tool)], tool.unit_id))


def _copy_frames(run: Run, index: int) -> list[dict[str, Any]]:
    segment = run.segments[index]
    assert isinstance(segment, Copy)
    parts = _parts(_copy_piece(run, index), _marker_of(run, index))
    if segment.as_status:
        return []  # sent as the final status message
    last = segment.last_chunk or None
    if not segment.grows:
        return [_artifact(segment.artifact_id, parts, append=None, last=last)]
    more = [{"kind": "text", "text": segment.grows}]
    return [
        _artifact(segment.artifact_id, parts, append=None, last=None),
        _artifact(segment.artifact_id, more, append=True, last=last),
    ]


def _final_copy(run: Run) -> Copy | None:
    last = run.segments[-1] if run.segments else None
    return last if isinstance(last, Copy) and last.as_status else None


def _user_message() -> dict[str, Any]:
    return _message([{"kind": "text", "text": "hi"}], "req-1", role="user")


def _end_frame(run: Run) -> dict[str, Any]:
    final = _final_copy(run)
    if final is not None and run.end.startswith("completed"):
        parts = _parts(_copy_piece(run, len(run.segments) - 1), _marker_of(run, -1))
        return _status("completed", _message(parts, final.message_id))
    if run.end == "completed-message":
        return _status("completed", _message(_parts(Piece(run.end_text), 0), run.end_message_id))
    if run.end == "failed-text":
        return _status("failed", _message(_parts(Piece(run.end_text), 0), run.end_message_id))
    return _status(run.end)


def stream_03(run: Run) -> list[dict[str, Any]]:
    """The run's stream results in the 0.3 shape."""
    if run.as_message:
        (segment,) = run.segments
        assert isinstance(segment, StatusText)
        (piece,) = segment.pieces
        return [_message(_parts(piece, segment.marker), piece.message_id)]
    frames: list[dict[str, Any]] = []
    if run.start == "task":
        frames.append(_task("submitted", [_user_message()], []))
    elif run.start == "submitted":
        frames.append(_status("submitted", _user_message()))
    elif run.start == "working":
        frames.append(_status("working"))
    for index, segment in enumerate(run.segments):
        if isinstance(segment, StatusText):
            frames += _status_frames(segment)
        elif isinstance(segment, ArtifactText):
            frames += _artifact_frames(segment)
        elif isinstance(segment, ToolCall):
            frames.append(_tool_frame(segment))
        else:
            frames += _copy_frames(run, index)
    frames.append(_end_frame(run))
    return frames


def _task(
    state: str,
    history: list[dict[str, Any]],
    artifacts: list[dict[str, Any]],
    message: dict[str, Any] | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {"state": state}
    if message is not None:
        status["message"] = message
    out: dict[str, Any] = {"kind": "task", "id": TASK_ID, "contextId": CONTEXT_ID, "status": status}
    if history:
        out["history"] = history
    if artifacts:
        out["artifacts"] = artifacts
    return out


def unary_03(run: Run) -> dict[str, Any]:
    """The run's unary result in the 0.3 shape: the Task a server keeps of the stream
    (status messages moved to the history in order, artifacts folded), or the Message."""
    frames = stream_03(run)
    if run.as_message:
        return frames[0]
    history = [_user_message()]
    artifacts: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for frame in frames[:-1]:
        if frame["kind"] == "status-update":
            message = frame["status"].get("message")
            if message is not None and message["role"] == "agent" and run.history:
                history.append(message)
        elif frame["kind"] == "artifact-update":
            artifact = frame["artifact"]
            key = artifact.get("artifactId", "")
            known = by_id.get(key) if key else None
            chunk_marker = frame.get("metadata", {}).get("object_type") == "chat.completion.chunk"
            if known is not None and (frame.get("append") is True or chunk_marker):
                known["parts"] = known["parts"] + artifact["parts"]
            elif known is not None:
                known["parts"] = list(artifact["parts"])
            else:
                kept = copy.deepcopy(artifact)
                artifacts.append(kept)
                if key:
                    by_id[key] = kept
    end = frames[-1]
    return _task(end["status"]["state"], history, artifacts, end["status"].get("message"))


_STATES_10 = {
    "submitted": "TASK_STATE_SUBMITTED",
    "working": "TASK_STATE_WORKING",
    "completed": "TASK_STATE_COMPLETED",
    "failed": "TASK_STATE_FAILED",
}


def _part_10(part: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in part.items() if k != "kind"}
    return out


def _parts_10(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # A2A 1.0 requires a part: the empty text the bridge writes (§2.12).
    return [_part_10(p) for p in parts] or [{"text": ""}]


def _message_10(message: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in message.items() if k != "kind"}
    out["role"] = "ROLE_USER" if message["role"] == "user" else "ROLE_AGENT"
    out["parts"] = _parts_10(message["parts"])
    return out


def _status_10(status: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"state": _STATES_10[status["state"]]}
    if "message" in status:
        out["message"] = _message_10(status["message"])
    return out


def _artifact_10(artifact: dict[str, Any]) -> dict[str, Any]:
    return {**artifact, "parts": _parts_10(artifact["parts"])}


def _task_10(task: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": task["id"], "contextId": task["contextId"]}
    out["status"] = _status_10(task["status"])
    if "history" in task:
        out["history"] = [_message_10(m) for m in task["history"]]
    if "artifacts" in task:
        out["artifacts"] = [_artifact_10(a) for a in task["artifacts"]]
    return out


def to_10(result: dict[str, Any]) -> dict[str, Any]:
    """A 0.3 result in the 1.0 JSON shape (ProtoJSON: ``false`` left out)."""
    kind = result["kind"]
    if kind == "message":
        return {"message": _message_10(result)}
    if kind == "task":
        return {"task": _task_10(result)}
    body = {k: v for k, v in result.items() if k not in ("kind", "final") and v is not False}
    if kind == "status-update":
        body["status"] = _status_10(result["status"])
        return {"statusUpdate": body}
    body["artifact"] = _artifact_10(result["artifact"])
    return {"artifactUpdate": body}


def stream_json(run: Run) -> list[dict[str, Any]]:
    frames = stream_03(run)
    return frames if run.wire == "0.3" else [to_10(f) for f in frames]


def unary_json(run: Run) -> dict[str, Any]:
    result = unary_03(run)
    return result if run.wire == "0.3" else to_10(result)


# --- what the user must see ---------------------------------------------------------------


def _shown_status(segment: StatusText, *, keeps_response_id: bool) -> list[Shown]:
    text, reasoning = _text_of(segment)
    if segment.response_id and keeps_response_id:
        return [Shown(segment.response_id, text, reasoning)]
    if segment.whole:  # the whole after its pieces, in a history: they were its pieces
        return [Shown(segment.pieces[0].message_id, text, reasoning)]
    return [Shown(p.message_id, p.text, p.reasoning) for p in segment.pieces]


def _shown_artifact(segment: ArtifactText) -> list[Shown]:
    if not segment.artifact_id:
        return [Shown("", c.text, c.reasoning) for c in segment.chunks]
    text, reasoning = _text_of(segment)
    return [Shown(segment.artifact_id, text, reasoning)]


def _shown_tool(tool: ToolCall) -> list[Shown]:
    return [Shown(tool.unit_id, tools=(tool.name,))]


def _end(run: Run, shown: list[Shown]) -> UserView:
    error = None
    if run.end == "completed-message":
        shown.append(Shown(run.end_message_id, run.end_text))
    elif run.end == "failed-text":
        error = run.end_text
    elif run.end == "failed":
        error = "remote task failed"
    return UserView(tuple(shown), error).merged()


def expected_stream(run: Run) -> UserView:
    shown: list[Shown] = []
    for segment in run.segments:
        if isinstance(segment, StatusText):
            shown += _shown_status(segment, keeps_response_id=True)
        elif isinstance(segment, ArtifactText):
            shown += _shown_artifact(segment)
        elif isinstance(segment, ToolCall):
            shown += _shown_tool(segment)
        elif isinstance(segment, Copy) and segment.grows:
            shown.append(_grown(run, segment))
    if run.as_message:
        return UserView(tuple(shown)).merged()
    return _end(run, shown)


def _grown(run: Run, segment: Copy) -> Shown:
    piece = _copy_piece(run, run.segments.index(segment))
    return Shown(segment.artifact_id, piece.text + segment.grows, piece.reasoning)


def expected_unary(run: Run) -> UserView:
    """The same run as a unary result: the history (when kept) before the artifacts; a
    response id on the event is lost with it (the pieces keep their own ids); a copy of
    what the Task does not keep is an answer of its own."""
    if run.as_message:
        return expected_stream(run)
    history: list[tuple[Segment, list[Shown]]] = []
    artifacts: list[tuple[Segment, list[Shown]]] = []
    final: list[Shown] = []
    visible: set[int] = set()
    for index, segment in enumerate(run.segments):
        if isinstance(segment, StatusText) and run.history:
            keeps = not segment.on_event
            history.append((segment, _shown_status(segment, keeps_response_id=keeps)))
            visible.add(index)
        elif isinstance(segment, ToolCall) and not segment.on_artifact and run.history:
            history.append((segment, _shown_tool(segment)))
            visible.add(index)
        elif isinstance(segment, ArtifactText):
            artifacts.append((segment, _shown_artifact(segment)))
            visible.add(index)
        elif isinstance(segment, ToolCall) and segment.on_artifact:
            artifacts.append((segment, _shown_tool(segment)))
            visible.add(index)
        elif isinstance(segment, Copy) and segment.grows:
            artifacts.append((segment, [_grown(run, segment)]))
        elif isinstance(segment, Copy):
            covered = range(index - segment.covers, index)
            if all(i in visible for i in covered):
                continue
            piece = _copy_piece(run, index)
            if not segment.as_status:
                artifacts.append(
                    (segment, [Shown(segment.artifact_id, piece.text, piece.reasoning)])
                )
            elif run.end == "completed":
                final.append(Shown(segment.message_id, piece.text, piece.reasoning))
    shown = [s for _, group in history + artifacts for s in group] + final
    return _end(run, shown)


def same_run_shown(run: Run) -> bool:
    """Streamed and unary, the run shows the very same messages (§11.8): the Task keeps
    the history, no response id travelled on the events only (the history keeps the
    messages' own ids then), and no artifact came before status text (the Task lists
    its artifacts after its history)."""
    if not run.history or any(isinstance(s, StatusText) and s.on_event for s in run.segments):
        return False
    kinds = [_is_status(s) for s in run.segments if not isinstance(s, Copy)]
    return kinds == sorted(kinds, reverse=True)


__all__ = [
    "Run",
    "expected_stream",
    "expected_unary",
    "runs",
    "same_run_shown",
    "stream_json",
    "unary_json",
]
