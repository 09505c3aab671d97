"""JSON read strictly, the same way on every HTTP door (JSON-RPC, REST, AG-UI) and for
what a remote server streams to the client.

Python's ``json`` module alone turns a client's mistake into a server error: bytes that
are not UTF-8 raise ``UnicodeDecodeError``, 10,000 nested brackets ``RecursionError``,
a 5,000-digit number ``ValueError``, and it accepts ``NaN`` and a lone surrogate escape
(``"\\ud800"``) that later breaks protobuf. Here each of those is a :class:`BodyError`
with a sentence for the caller:

- :func:`parse_json` — the body is not JSON text (``syntax``: JSON-RPC ``-32700``): not
  UTF-8, malformed, nested too deeply to parse, ``NaN`` / ``Infinity``, a number out of
  range;
- :func:`check_json` — the JSON is well-formed but no A2A message can hold it (JSON-RPC
  ``-32602`` inside ``params``): nested deeper than :data:`MAX_DEPTH` (protobuf, which
  every A2A message goes through, stops at 100 message levels, about 49 JSON levels of
  metadata), or a string or key that is not Unicode (a lone surrogate).
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

#: Deepest nesting accepted in a whole request body (a JSON-RPC envelope counts as one
#: level). Every A2A message protobuf can parse fits; deeper bodies are refused here.
MAX_DEPTH = 48


class BodyError(ValueError):
    """Why a body is refused; ``str()`` is the caller's sentence."""

    def __init__(self, message: str, *, syntax: bool, path: str = "") -> None:
        super().__init__(message)
        #: True: not JSON text at all. False: JSON that no A2A message can hold.
        self.syntax = syntax
        #: Where in the document (``params.message.parts[0].text``); empty: the body.
        self.path = path


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(name)


#: Byte classes for :func:`_orjson_safe`: digits → ``0``, opening brackets → ``{``,
#: anything else → ``x``.
_CLASSES = {**dict.fromkeys(b"0123456789", ord("0")), **dict.fromkeys(b"[{", ord("{"))}
_SHAPES = bytes(_CLASSES.get(b, ord("x")) for b in range(256))
#: orjson reads an integer of more digits than this as a float (json keeps it exact).
_LONG_NUMBER = b"0" * 19
#: What may come between a number's first digit and what it follows (``:``, ``,``, ``[``
#: or nothing): JSON's whitespace and a minus sign.
_BEFORE_DIGITS = b" \t\r\n-"
_NUMBER_FOLLOWS = b":,["
#: Fewer brackets than json's recursion limit: orjson cannot accept what json refuses.
_FEW_BRACKETS = 900


def _orjson_safe(data: bytes) -> bool:
    """orjson reads ``data`` to the same value as :func:`json.loads` (or refuses it): no
    number that starts with a digit run long enough to be an integer past 64 bits (a run
    inside a string, such as a nanosecond time in an id, is text; orjson reads fractions
    and exponents as json does), nesting json can parse (a document of fewer bytes than
    twice the bound cannot nest that deep)."""
    shapes = data.translate(_SHAPES)
    if len(data) >= 2 * _FEW_BRACKETS and shapes.count(b"{") >= _FEW_BRACKETS:
        return False
    at = shapes.find(_LONG_NUMBER)
    while at >= 0:  # the first digit of a run: a number's when it follows : , [ or nothing
        before = at - 1
        while before >= 0 and data[before] in _BEFORE_DIGITS:
            before -= 1
        if before < 0 or data[before] in _NUMBER_FOLLOWS:
            return False
        at = shapes.find(_LONG_NUMBER, at + len(_LONG_NUMBER))
    return True


def parse_json(body: bytes | str) -> Any:
    """``body`` as JSON (strict UTF-8, no ``NaN``/``Infinity``); raises
    :class:`BodyError` with ``syntax=True``.

    orjson reads it first, where it gives exactly what the ``json`` path below gives (it
    refuses ``NaN``, lone surrogates and invalid UTF-8, which the path below then
    explains): about a third of the cost of a stream frame or a request body."""
    data = body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass")
    if _orjson_safe(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # the json path below says why (or, for a lone surrogate, accepts it)
    try:
        text = body if isinstance(body, str) else body.decode("utf-8")
    except UnicodeDecodeError as exc:
        assert isinstance(body, bytes)
        byte = body[exc.start]
        raise BodyError(
            f"body is not valid UTF-8 (byte 0x{byte:02x} at offset {exc.start})", syntax=True
        ) from None
    try:
        return json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    except RecursionError:
        raise BodyError("JSON nested too deeply to parse", syntax=True) from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        what = exc.msg.removesuffix(" at")  # "Unterminated string starting at"
        raise BodyError(f"invalid JSON: {what} at {where}", syntax=True) from None
    except ValueError:  # the hooks above, or a number past Python's 4,300 digits
        raise BodyError(
            "invalid JSON: NaN, Infinity or a number out of range", syntax=True
        ) from None


class _Refused(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.path: list[str | int] = []


def _unicode(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            code = ord(text[exc.start])
            raise _Refused(f"lone surrogate \\u{code:04x} (not Unicode text)") from None


def _walk(value: Any, depth: int) -> None:
    if isinstance(value, str):
        _unicode(value)
        return
    if not isinstance(value, dict | list):
        return
    if depth >= MAX_DEPTH:
        raise _Refused(f"nested deeper than {MAX_DEPTH} levels")
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        try:
            if isinstance(key, str):
                _unicode(key)
            _walk(item, depth + 1)
        except _Refused as refused:
            refused.path.append(key)
            raise


def dotted_path(path: list[str | int]) -> str:
    """``['params', 'message', 'parts', 0]`` → ``params.message.parts[0]`` (a very deep
    path, or a very long key, shortened with ``…``: keys are the client's to choose)."""
    out = ""
    for step in path[:_PATH_STEPS]:
        if isinstance(step, str) and len(step) > _KEY_SHOWN:
            step = step[: _KEY_SHOWN - 1] + "…"
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out + ("…" if len(path) > _PATH_STEPS else "")


_PATH_STEPS = 8
_KEY_SHOWN = 40


def check_json(document: Any) -> None:
    """Raise :class:`BodyError` (``syntax=False``, with the ``path``) when the parsed
    ``document`` is nested deeper than :data:`MAX_DEPTH` or holds a string or key that is
    not Unicode text."""
    try:
        _walk(document, 0)
    except _Refused as refused:
        path = dotted_path(refused.path[::-1])
        where = f"{path}: " if path else ""
        raise BodyError(f"{where}{refused.reason}", syntax=False, path=path) from None


def checked_by_parsing(body: bytes) -> bool:
    """Whether :func:`check_json` cannot refuse anything in ``parse_json(body)``: no
    ``\\u`` escape (every string is UTF-8 text the parse decoded, never a lone surrogate)
    and at most :data:`MAX_DEPTH` brackets in all (nesting cannot be deeper). A request
    body usually is; its walk is then skipped."""
    return b"\\u" not in body and body.count(b"{") + body.count(b"[") <= MAX_DEPTH


def read_json(body: bytes) -> Any:
    """``body`` parsed and checked (:func:`parse_json`, then :func:`check_json`)."""
    document = parse_json(body)
    check_json(document)
    return document
